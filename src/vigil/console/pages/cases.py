"""Cases list and case detail (verdict, AI conversation, evidence, timeline, comments, status/assignee/disposition)."""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.orm import Session

from vigil.cases import service as cases_service
from vigil.cases.constants import NEXT_STATUSES, CaseDisposition, CaseSeverity, CaseStatus
from vigil.cases.models import Case
from vigil.cases.schemas import CaseUpdate, EvidenceOut
from vigil.console.deps import IdentityDep, WriterDep
from vigil.console.forms import ListFilters
from vigil.console.pages.ai_conversation import conversation, investigated_by
from vigil.console.rendering import render
from vigil.console.report import load_citations, step_views
from vigil.errors import Conflict, Forbidden, NotFound, ValidationFailed
from vigil.facts.suggestions import FactSuggestion, suggest_facts
from vigil.investigations import service as investigations_service
from vigil.investigations.ai_trail import case_exchanges
from vigil.orgs import service as orgs_service
from vigil.playbooks import service as playbooks_service
from vigil.users.schemas import ConsoleIdentity
from vigil.web.deps import DbDep

router = APIRouter()

PAGE_SIZE = 50
CHANGEABLE = ("status", "severity", "disposition", "assignee")
DONE_MESSAGES = {
    "status": "Status updated.",
    "severity": "Severity updated.",
    "disposition": "Disposition updated.",
    "assignee": "Assignee updated.",
    "closed": "Case closed.",
    "reopened": "Case reopened.",
    "comment": "Comment added.",
}


def _choice(value: str | None, allowed: type[CaseStatus] | type[CaseSeverity] | type[CaseDisposition]) -> str | None:
    """A filter value from the query string: empty means no filter, anything unknown is a 422 page."""
    if not value:
        return None
    if value not in {member.value for member in allowed}:
        raise ValidationFailed(f"Unknown filter value {value!r}.", code="invalid_filter")
    return value


def _load_case(session: Session, identity: ConsoleIdentity, case_ref: str) -> Case:
    """The case, if the signed-in user's organizations include its organization."""
    try:
        return cases_service.get_case(session, identity.principal, case_ref)
    except Forbidden as error:
        raise Forbidden(
            "This case belongs to an organization you are not assigned to.", code="organization_forbidden"
        ) from error


@router.get("/cases")
def case_list(
    request: Request,
    identity: IdentityDep,
    db: DbDep,
    organization: str = "",
    status: str = "",
    severity: str = "",
    disposition: str = "",
    assignee: str = "",
    q: str = "",
    cursor: str = "",
) -> Response:
    filters = ListFilters(
        "/cases",
        organization=organization.strip().upper(),
        status=_choice(status, CaseStatus) or "",
        severity=_choice(severity, CaseSeverity) or "",
        disposition=_choice(disposition, CaseDisposition) or "",
        assignee=assignee.strip().lower(),
        q=q.strip()[:200],
    )
    wanted_assignee = identity.email if filters["assignee"] == "me" else filters["assignee"]
    principal = identity.principal
    with db.read() as session:
        cases, next_cursor = cases_service.list_cases(
            session,
            principal,
            organization_code=filters.given("organization"),
            status=filters.given("status"),
            severity=filters.given("severity"),
            disposition=filters.given("disposition"),
            assignee=wanted_assignee or None,
            q=filters.given("q"),
            cursor=cursor or None,
            limit=PAGE_SIZE,
        )
        organizations = [o.organization_code for o in orgs_service.list_organizations(session, principal)]
        assignees = cases_service.assignees_in_use(session, principal)
    return render(
        request,
        "cases/list.html",
        {
            "cases": cases,
            "filters": filters,
            "filtered": bool(filters.active),
            "organizations": organizations,
            "assignees": assignees,
            "statuses": list(CaseStatus),
            "severities": list(CaseSeverity),
            "dispositions": list(CaseDisposition),
            "next_url": filters.url(cursor=next_cursor) if next_cursor else None,
            "first_url": filters.url() if cursor else None,
        },
    )


def _detail_context(session: Session, identity: ConsoleIdentity, case: Case) -> dict[str, Any]:
    investigator = None
    if case.playbook_uuid is not None:
        try:
            investigator = playbooks_service.get_version(
                session, identity.principal, case.playbook_uuid, case.playbook_version
            ).name
        except NotFound:
            investigator = None
    assignable = cases_service.assignable_users(session, case.organization_uuid)
    citations = load_citations(case.citations)
    return {
        "case": case,
        "findings": _json_list(case.findings),
        "citations": citations,
        "actions": _json_list(case.recommended_actions),
        "evidence": step_views(
            [EvidenceOut.model_validate(step) for step in investigations_service.case_evidence(session, case)],
            citations,
        ),
        "investigated_by": investigated_by(case.ai_model),
        "conversation": conversation(case_exchanges(session, case)),
        "timeline": cases_service.case_timeline(session, case),
        "comments": cases_service.case_comments(session, case),
        "investigator": investigator,
        "assignable": assignable,
        "can_assign_me": any(email == identity.email for email, _ in assignable),
        "next_statuses": NEXT_STATUSES[CaseStatus(case.status)],
        "severities": list(CaseSeverity),
        "dispositions": list(CaseDisposition),
        "closing_dispositions": [d for d in CaseDisposition if d is not CaseDisposition.PENDING],
        "submission_id": uuid.uuid4().hex,
        "fact_offers": _fact_offers(session, identity, case),
    }


def _fact_offers(session: Session, identity: ConsoleIdentity, case: Case) -> list[tuple[FactSuggestion, str]]:
    """Closed with another disposition than the AI's: the facts that would explain it, each a link to the add form
    filled in from the case (the analyst checks and records it with one more click)."""
    if not identity.can_write or case.status != CaseStatus.CLOSED.value:
        return []
    entities = investigations_service.case_entities(session, case)
    offers = suggest_facts(entities, disposition=case.disposition, ai_disposition=case.ai_disposition)
    reason = (
        f"Case {case.case_id} was closed as {case.disposition.replace('_', ' ')}; "
        f"the AI proposed {case.ai_disposition.replace('_', ' ')}."
    )
    query = {"case": case.case_id, "reason": reason}
    return [
        (offer, f"/facts/{case.organization_code}?{urlencode(query | {'kind': offer.kind, 'value': offer.value})}#add")
        for offer in offers
    ]


def _json_list(raw: str) -> list[str]:
    value = json.loads(raw or "[]")
    return [str(item) for item in value] if isinstance(value, list) else []


def _detail_page(
    request: Request,
    identity: ConsoleIdentity,
    db: DbDep,
    case_ref: str,
    *,
    error: str | None = None,
    error_field: str | None = None,
    comment_draft: str = "",
    lifecycle_draft: dict[str, str] | None = None,
    status_code: int = 200,
) -> Response:
    with db.read() as session:
        case = _load_case(session, identity, case_ref)
        context = _detail_context(session, identity, case)
    done = request.query_params.get("done")
    context.update(
        error=error,
        error_field=error_field,
        comment_draft=comment_draft,
        lifecycle_draft=lifecycle_draft or {},
        done=DONE_MESSAGES.get(done or ""),
    )
    return render(request, "cases/detail.html", context, status_code=status_code)


@router.get("/cases/{case_ref}")
def case_detail(request: Request, case_ref: str, identity: IdentityDep, db: DbDep) -> Response:
    return _detail_page(request, identity, db, case_ref)


def _done(case_id: str, what: str) -> RedirectResponse:
    return RedirectResponse(f"/cases/{case_id}?done={what}", status_code=303)


def _refused(
    request: Request,
    identity: ConsoleIdentity,
    db: DbDep,
    case_ref: str,
    error: ValidationFailed | Conflict,
    **extra: Any,
) -> Response:
    field = next((str(d.get("field")) for d in error.details if d.get("field")), None)
    return _detail_page(
        request, identity, db, case_ref, error=error.message, error_field=field, status_code=error.status_code, **extra
    )


@router.post("/cases/{case_ref}/change")
def change_case(
    request: Request,
    case_ref: str,
    identity: WriterDep,
    db: DbDep,
    field: Annotated[str, Form()],
    value: Annotated[str, Form()] = "",
    expected: Annotated[str, Form()] = "",
    disposition: Annotated[str, Form()] = "",
    comment: Annotated[str, Form()] = "",
    submission_id: Annotated[str, Form()] = "",
) -> Response:
    """One field from the detail page's controls; `expected` is the value the page showed (409 if it moved).

    A status change is the lifecycle control: closing takes the disposition and closing note sent with it.
    """
    if field not in CHANGEABLE:
        raise ValidationFailed(f"Unknown case field {field!r}.", code="invalid_field")
    if field == "status" and value == CaseStatus.CLOSED.value:
        draft = {"status": value, "disposition": disposition, "comment": comment}
        return _close(request, identity, db, case_ref, draft, expected=expected, submission_id=submission_id)
    try:
        if field == "assignee":
            changes = CaseUpdate(assignee=value or None)
        else:
            changes = CaseUpdate.model_validate({field: value})
    except ValueError:
        return _refused(
            request,
            identity,
            db,
            case_ref,
            ValidationFailed(f"{value!r} is not a valid {field}.", details=[{"field": field}]),
        )
    try:
        with db.write() as session:
            case = cases_service.update_case(
                session,
                identity.principal,
                _load_case(session, identity, case_ref).case_id,
                changes,
                actor=identity.email,
                expected={field: expected or None},
            )
            case_id = case.case_id
            reopened = field == "status" and expected == CaseStatus.CLOSED.value and case.status != expected
    except (ValidationFailed, Conflict) as error:
        return _refused(request, identity, db, case_ref, error, lifecycle_draft={field: value})
    return _done(case_id, "reopened" if reopened else field)


def _close(
    request: Request,
    identity: ConsoleIdentity,
    db: DbDep,
    case_ref: str,
    draft: dict[str, str],
    *,
    expected: str,
    submission_id: str,
) -> Response:
    """Close with the chosen disposition (the service refuses a pending one) and the optional closing note."""
    chosen = next((d for d in CaseDisposition if d.value == draft["disposition"]), None)
    try:
        with db.write() as session:
            case = cases_service.close_case(
                session,
                identity.principal,
                _load_case(session, identity, case_ref).case_id,
                actor=identity.email,
                disposition=chosen,
                comment=draft["comment"],
                submission_id=f"{submission_id}-close" if submission_id else None,
                expected_status=expected or None,
            )
            case_id = case.case_id
    except (ValidationFailed, Conflict) as error:
        return _refused(request, identity, db, case_ref, error, lifecycle_draft=draft)
    return _done(case_id, "closed")


@router.post("/cases/{case_ref}/comments")
def add_comment(
    request: Request,
    case_ref: str,
    identity: WriterDep,
    db: DbDep,
    body: Annotated[str, Form()] = "",
    submission_id: Annotated[str, Form()] = "",
) -> Response:
    try:
        with db.write() as session:
            case_id = _load_case(session, identity, case_ref).case_id
            comment, _ = cases_service.add_comment(
                session,
                identity.principal,
                case_id,
                author=identity.email,
                body=body,
                submission_id=submission_id or None,
            )
    except ValidationFailed as error:
        return _refused(request, identity, db, case_ref, error, comment_draft=body)
    return RedirectResponse(f"/cases/{case_id}?done=comment#comment-{comment.id}", status_code=303)
