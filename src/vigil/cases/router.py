"""Cases over the API (SPEC §3, §4): list with filters and cursor pagination, one case with evidence and
timeline, and the analyst's changes (status, severity, disposition, assignee) and comments."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Response
from sqlalchemy.orm import Session

from vigil.cases import service
from vigil.cases.constants import CaseDisposition, CaseSeverity, CaseStatus
from vigil.cases.models import Case
from vigil.cases.schemas import (
    CaseCommentOut,
    CaseDetail,
    CaseEventOut,
    CaseOut,
    CasePage,
    CaseUpdate,
    CommentCreate,
    EvidenceOut,
)
from vigil.input_types import Text
from vigil.investigations import service as investigations_service
from vigil.investigations.ai_trail import case_ai_trail
from vigil.web.deps import DbDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi/cases", tags=["cases"], responses=ERROR_RESPONSES)

CHANGE_RESPONSES: dict[int | str, dict[str, str]] = {
    404: {"description": "No such case"},
    409: {"description": "The case changed meanwhile, or the status change is not a legal transition (see details)"},
}


def _detail(session: Session, case: Case) -> CaseDetail:
    return CaseDetail(
        **CaseOut.model_validate(case).model_dump(),
        evidence=[EvidenceOut.model_validate(s) for s in investigations_service.case_evidence(session, case)],
        timeline=[CaseEventOut.model_validate(e) for e in service.case_timeline(session, case)],
        comments=[CaseCommentOut.model_validate(c) for c in service.case_comments(session, case)],
        ai=case_ai_trail(session, case),
    )


@router.get("", summary="List cases, newest first")
def list_cases(
    db: DbDep,
    principal: PrincipalDep,
    organization_code: Text | None = None,
    status: CaseStatus | None = None,
    severity: CaseSeverity | None = None,
    disposition: CaseDisposition | None = None,
    assignee: Annotated[Text | None, Query(max_length=320, description="An assignee's email, or `unassigned`.")] = None,
    q: Annotated[Text | None, Query(max_length=200, description="Substring of the case id or title.")] = None,
    cursor: Text | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> CasePage:
    with db.read() as session:
        cases, next_cursor = service.list_cases(
            session,
            principal,
            organization_code=organization_code,
            status=status,
            severity=severity,
            disposition=disposition,
            assignee=assignee,
            q=q,
            cursor=cursor,
            limit=limit,
        )
        return CasePage(cases=[CaseOut.model_validate(c) for c in cases], next_cursor=next_cursor)


@router.get(
    "/{case_ref}",
    summary="One case by case_id or case_uuid, with evidence, timeline, comments and the AI trail",
    description=(
        "`ai` lists every model request (prompt parts, response, tokens, cost estimate) and tool call (inputs, "
        "output) the alert's investigations made, over every attempt, with their totals."
    ),
)
def get_case(case_ref: Text, db: DbDep, principal: PrincipalDep) -> CaseDetail:
    with db.read() as session:
        return _detail(session, service.get_case(session, principal, case_ref))


@router.patch(
    "/{case_ref}",
    summary="Change a case's status, severity, disposition or assignee",
    description=(
        "Only the fields sent change; each change is a timeline event with the key as actor. Closing "
        "(`status: closed`) needs a disposition other than `pending` (send both to close with a verdict); "
        "leaving `closed` reopens the case (to `in_progress` only). A case never returns to `new`; any other open "
        "status may move to another (409 `invalid_status_transition` otherwise, with the allowed statuses in "
        "`details`). Repeating a change is a no-op, so retries are safe."
    ),
    responses=CHANGE_RESPONSES,
)
def update_case(case_ref: Text, changes: CaseUpdate, db: DbDep, principal: PrincipalDep) -> CaseDetail:
    with db.write() as session:
        case = service.update_case(session, principal, case_ref, changes, actor=principal.actor)
        return _detail(session, case)


@router.post(
    "/{case_ref}/comments",
    status_code=201,
    summary="Add an analyst comment to a case",
    description=(
        "At most 10,000 characters. With an `Idempotency-Key` header a retried request returns the first "
        "comment (200) instead of adding a second."
    ),
    responses={**CHANGE_RESPONSES, 200: {"description": "Replay of an earlier request with the same key"}},
)
def add_comment(
    case_ref: Text,
    comment: CommentCreate,
    db: DbDep,
    principal: PrincipalDep,
    response: Response,
    idempotency_key: Annotated[Text | None, Header(max_length=128)] = None,
) -> CaseCommentOut:
    with db.write() as session:
        added, created = service.add_comment(
            session,
            principal,
            case_ref,
            author=principal.actor,
            body=comment.body,
            submission_id=idempotency_key,
        )
        if not created:
            response.status_code = 200
        return CaseCommentOut.model_validate(added)
