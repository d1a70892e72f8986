"""Case rules: one case per investigated alert, per-organization numbering, queries with scoping, and the
analyst's changes (status, severity, disposition, assignee, comments, close/reopen), each one timeline event."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping

from sqlalchemy import CursorResult, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from vigil.ai.schemas import Analysis
from vigil.alerts.models import Alert
from vigil.auth.schemas import Principal
from vigil.auth.scope import get_by_reference, scoped
from vigil.cases.constants import NEXT_STATUSES, CaseDisposition, CaseStatus
from vigil.cases.models import Case, CaseComment, CaseCounter, CaseEvent
from vigil.cases.schemas import COMMENT_MAX_CHARS, CaseUpdate
from vigil.db.base import epoch_now
from vigil.db.pagination import newest_first_page
from vigil.db.upsert import increment_counter
from vigil.errors import Conflict, NotFound, ValidationFailed
from vigil.users.models import ConsoleUser, UserOrganization
from vigil.users.schemas import Role

AI_ACTOR = "vigil:ai"
#: The `assignee` filter value that selects cases nobody is assigned to (an email always has an "@").
UNASSIGNED = "unassigned"
#: Fields an analyst changes; applied in this order so one request can set a disposition and close.
CHANGE_ORDER = ("disposition", "severity", "assignee", "status")


def open_case_for_alert(
    session: Session,
    alert: Alert,
    *,
    attempt: int,
    playbook_uuid: uuid.UUID | None,
    playbook_version: int | None,
    analysis: Analysis,
) -> Case:
    """Create the alert's case, or refresh it when a re-run of the investigation finishes: still one case."""
    now = epoch_now()
    case = session.scalar(select(Case).where(Case.alert_uuid == alert.alert_uuid))
    fields = {
        "playbook_uuid": playbook_uuid,
        "playbook_version": playbook_version,
        "attempt": attempt,
        "severity": analysis.severity.value,
        "verdict": analysis.verdict.value,
        "category": analysis.category.value,
        "ai_disposition": analysis.disposition.value,
        "ai_confidence": analysis.confidence,
        "summary": analysis.summary,
        "findings": json.dumps(analysis.key_findings),
        "recommended_actions": json.dumps(analysis.recommended_actions),
        "citations": json.dumps([citation.model_dump(mode="json") for citation in analysis.citations]),
        "ai_model": analysis.model,
        "ai_fallback_reason": analysis.fallback_reason,
        "modified_at": now,
    }
    if case is not None:
        for name, value in fields.items():
            setattr(case, name, value)
        _event(session, case.case_uuid, "reinvestigated", f"Retry {attempt} refreshed the analysis")
        return case
    number = increment_counter(session, CaseCounter, {"organization_uuid": alert.organization_uuid})
    case = Case(
        case_uuid=uuid.uuid4(),
        case_id=f"{alert.organization_code}-{number}",
        organization_uuid=alert.organization_uuid,
        organization_code=alert.organization_code,
        alert_uuid=alert.alert_uuid,
        alert_id=alert.alert_id,
        title=f"{alert.alert_type or 'Alert'} ({alert.alert_id})",
        status=CaseStatus.NEW.value,
        disposition="pending",
        assignee=None,
        created_at=now,
        closed_at=None,
        **fields,
    )
    session.add(case)
    session.flush()
    _event(
        session,
        case.case_uuid,
        "opened",
        f"AI verdict {analysis.verdict.value}, severity {analysis.severity.value}, proposed disposition "
        f"{analysis.disposition.value} (confidence {analysis.confidence:.2f}) by {analysis.model}",
    )
    if analysis.fallback_reason:
        _event(session, case.case_uuid, "ai_fallback", f"The built-in analyst finished: {analysis.fallback_reason}")
    return case


def list_cases(
    session: Session,
    principal: Principal,
    *,
    organization_code: str | None,
    status: str | None,
    severity: str | None,
    cursor: str | None,
    limit: int,
    disposition: str | None = None,
    assignee: str | None = None,
    q: str | None = None,
) -> tuple[list[Case], str | None]:
    """Newest first; `assignee` is an email or `UNASSIGNED`; `q` matches the case id or title (substring)."""
    query = scoped(select(Case), principal)
    if organization_code:
        query = query.where(Case.organization_code == organization_code.strip().upper())
    if status:
        query = query.where(Case.status == status)
    if severity:
        query = query.where(Case.severity == severity)
    if disposition:
        query = query.where(Case.disposition == disposition)
    if assignee:
        wanted = assignee.strip().lower()
        query = query.where(Case.assignee.is_(None) if wanted == UNASSIGNED else Case.assignee == wanted)
    if q and q.strip():
        pattern = "%" + _escape_like(q.strip()) + "%"
        query = query.where(or_(Case.case_id.ilike(pattern, escape="\\"), Case.title.ilike(pattern, escape="\\")))
    return newest_first_page(session, query, Case.id, cursor, limit)


def assignees_in_use(session: Session, principal: Principal) -> list[str]:
    """Distinct assignees of the cases the principal can see (for the list's filter)."""
    query = select(Case.assignee).where(Case.assignee.is_not(None)).distinct().order_by(Case.assignee)
    return [email for email in session.scalars(scoped(query, principal)) if email]


def assignable_users(session: Session, organization_uuid: uuid.UUID) -> list[tuple[str, str]]:
    """(email, name) of active console users who can see the organization: admins and its assigned users."""
    members = select(UserOrganization.user_uuid).where(UserOrganization.organization_uuid == organization_uuid)
    query = (
        select(ConsoleUser.email, ConsoleUser.name)
        .where(
            ConsoleUser.disabled_at.is_(None),
            or_(ConsoleUser.role == Role.ADMIN.value, ConsoleUser.user_uuid.in_(members)),
        )
        .order_by(ConsoleUser.email)
    )
    return [(row[0], row[1]) for row in session.execute(query)]


def get_case(session: Session, principal: Principal, case_ref: str) -> Case:
    """By case_uuid or case_id; another tenant's case is not found (a case_id naming an organization outside
    the principal's list is SPEC §2's 403)."""
    missing = NotFound(f"No case {case_ref}.", code="case_not_found")
    return get_by_reference(session, principal, Case, Case.case_uuid, Case.case_id, case_ref, missing)


def case_timeline(session: Session, case: Case) -> list[CaseEvent]:
    return list(session.scalars(select(CaseEvent).where(CaseEvent.case_uuid == case.case_uuid).order_by(CaseEvent.id)))


def case_comments(session: Session, case: Case) -> list[CaseComment]:
    return list(
        session.scalars(select(CaseComment).where(CaseComment.case_uuid == case.case_uuid).order_by(CaseComment.id))
    )


def update_case(
    session: Session,
    principal: Principal,
    case_ref: str,
    changes: CaseUpdate,
    *,
    actor: str,
    expected: Mapping[str, str | None] | None = None,
) -> Case:
    """Apply an analyst's changes in one transaction; each real change is one timeline event.

    Every write is conditional on the value it replaces, so a double submit (or two analysts racing) changes
    the case once: the repeat finds the value already set and does nothing. `expected` (what the analyst's
    form showed) turns a change that someone else made in between into a 409 instead of silently overwriting.
    """
    case = get_case(session, principal, case_ref)
    given = changes.model_fields_set
    for name in CHANGE_ORDER:
        if name not in given:
            continue
        value = getattr(changes, name)
        if name == "assignee":
            value = _check_assignee(session, case, value)
        elif value is not None:
            value = str(value)
        _change(session, case, name, value, actor=actor, expected=(expected or {}).get(name, _ANY))
    return case


def close_case(
    session: Session,
    principal: Principal,
    case_ref: str,
    *,
    actor: str,
    disposition: CaseDisposition | None = None,
    comment: str | None = None,
    submission_id: str | None = None,
    expected_status: str | None = None,
) -> Case:
    """Close with a disposition (the given one, else the case's current one, which must not be pending).

    `expected_status` is the status the analyst's form showed: if it moved meanwhile, 409 instead of closing.
    """
    changes = (
        CaseUpdate(status=CaseStatus.CLOSED)
        if disposition is None
        else CaseUpdate(status=CaseStatus.CLOSED, disposition=disposition)
    )
    expected = {"status": expected_status} if expected_status else None
    case = update_case(session, principal, case_ref, changes, actor=actor, expected=expected)
    if comment and comment.strip():
        add_comment(session, principal, case.case_id, author=actor, body=comment, submission_id=submission_id)
    return case


def add_comment(
    session: Session,
    principal: Principal,
    case_ref: str,
    *,
    author: str,
    body: str,
    submission_id: str | None = None,
) -> tuple[CaseComment, bool]:
    """Add an analyst comment; the same `submission_id` twice (a double submit, a retried request) adds one.

    Returns the comment and whether this call created it.
    """
    case = get_case(session, principal, case_ref)
    text = body.strip()
    if not text:
        raise ValidationFailed(
            "The comment is empty.", code="invalid_comment", details=[{"field": "body", "message": "empty"}]
        )
    if len(text) > COMMENT_MAX_CHARS:
        raise ValidationFailed(
            f"A comment holds at most {COMMENT_MAX_CHARS:,} characters; this one has {len(text):,}.",
            code="invalid_comment",
            details=[{"field": "body", "message": f"at most {COMMENT_MAX_CHARS} characters"}],
        )
    key = (submission_id or "").strip()[:128] or None
    if key is not None:
        existing = _comment_by_submission(session, case.case_uuid, key)
        if existing is not None:
            return existing, False
    now = epoch_now()
    comment = CaseComment(case_uuid=case.case_uuid, author=author, body=text, created_at=now, submission_id=key)
    try:
        with session.begin_nested():
            session.add(comment)
            session.flush()
    except IntegrityError:
        winner = _comment_by_submission(session, case.case_uuid, key) if key else None
        if winner is None:
            raise
        return winner, False
    preview = text if len(text) <= 160 else text[:157] + "…"
    _event(session, case.case_uuid, "comment", f"Comment: {preview}", actor=author)
    session.execute(update(Case).where(Case.case_uuid == case.case_uuid).values(modified_at=now))
    return comment, True


_ANY = object()  # `expected` not given: the change applies whatever the current value is


def _change(session: Session, case: Case, name: str, value: str | None, *, actor: str, expected: object) -> None:
    current: str | None = getattr(case, name)
    if current == value:
        return
    if expected is not _ANY and current != expected:
        raise _changed_meanwhile(case, name, current)
    now = epoch_now()
    values: dict[str, object] = {name: value, "modified_at": now}
    kind = name
    if name == "status":
        kind = _check_status_change(case, current, value, values)
    elif name == "disposition" and value == CaseDisposition.PENDING.value and case.status == CaseStatus.CLOSED.value:
        raise ValidationFailed(
            "A closed case keeps its disposition; reopen the case to set it back to pending.",
            code="closed_case_needs_disposition",
            details=[{"field": "disposition", "value": value}],
        )
    column = getattr(Case, name)
    condition = column.is_(None) if current is None else column == current
    result = session.execute(update(Case).where(Case.case_uuid == case.case_uuid, condition).values(**values))
    if not isinstance(result, CursorResult) or result.rowcount == 0:
        session.refresh(case)
        if getattr(case, name) == value:
            return  # the same change won the race: done once
        raise _changed_meanwhile(case, name, getattr(case, name))
    session.refresh(case)
    session.add(
        CaseEvent(
            case_uuid=case.case_uuid,
            at=now,
            actor=actor,
            kind=kind,
            message=_change_message(name, current, value, case),
            field=name,
            from_value=current,
            to_value=value,
        )
    )
    session.flush()


def _check_status_change(case: Case, current: str | None, value: str | None, values: dict[str, object]) -> str:
    """Only the lifecycle's next statuses (NEXT_STATUSES); closing needs a real disposition and stamps
    closed_at; leaving closed is a reopen and clears it."""
    allowed = NEXT_STATUSES.get(CaseStatus(current), ()) if current else ()
    if value not in {status.value for status in allowed}:
        raise Conflict(
            f"A case that is {_shown(current)} cannot become {_shown(value)}; it can become "
            f"{' or '.join(_shown(status.value) for status in allowed)}.",
            code="invalid_status_transition",
            details=[{"field": "status", "from": current, "to": value, "allowed": [s.value for s in allowed]}],
        )
    if value == CaseStatus.CLOSED.value:
        if case.disposition == CaseDisposition.PENDING.value:
            raise ValidationFailed(
                "Set a disposition (true positive, benign true positive or false positive) before closing the case.",
                code="disposition_required",
                details=[{"field": "disposition", "message": "must not be pending to close the case"}],
            )
        values["closed_at"] = values["modified_at"]
        return "closed"
    if current == CaseStatus.CLOSED.value:
        values["closed_at"] = None
        return "reopened"
    return "status"


def _change_message(name: str, before: str | None, after: str | None, case: Case) -> str:
    label = {"status": "Status", "severity": "Severity", "disposition": "Disposition", "assignee": "Assignee"}[name]
    text = f"{label}: {_shown(before)} → {_shown(after)}"
    if name == "disposition" and after == case.ai_disposition:
        text += f" (confirms the AI's proposal, confidence {case.ai_confidence:.2f})"
    return text


def _shown(value: str | None) -> str:
    return value.replace("_", " ") if value and "@" not in value else (value or "unassigned")


def _changed_meanwhile(case: Case, name: str, current: str | None) -> Conflict:
    return Conflict(
        f"Someone changed the {name} of {case.case_id} to {_shown(current)} in the meantime; reload and try again.",
        code="case_changed",
        details=[{"field": name, "value": current}],
    )


def _check_assignee(session: Session, case: Case, value: str | None) -> str | None:
    if value is None or not value.strip() or value.strip().lower() == UNASSIGNED:
        return None
    email = value.strip().lower()
    allowed = {address.lower() for address, _ in assignable_users(session, case.organization_uuid)}
    if email not in allowed:
        raise ValidationFailed(
            f"{email} is not an active console user who can see organization {case.organization_code}.",
            code="invalid_assignee",
            details=[{"field": "assignee", "value": email}],
        )
    return email


def _comment_by_submission(session: Session, case_uuid: uuid.UUID, submission_id: str) -> CaseComment | None:
    return session.scalar(
        select(CaseComment).where(CaseComment.case_uuid == case_uuid, CaseComment.submission_id == submission_id)
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _event(session: Session, case_uuid: uuid.UUID, kind: str, message: str, actor: str = AI_ACTOR) -> None:
    session.add(CaseEvent(case_uuid=case_uuid, at=epoch_now(), actor=actor, kind=kind, message=message))
