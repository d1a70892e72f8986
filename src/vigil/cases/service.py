"""Case rules: one case per investigated alert, per-organization numbering, queries with scoping."""

from __future__ import annotations

import json
import uuid

from sqlalchemy import select
from sqlalchemy.orm import Session

from vigil.ai.schemas import Analysis
from vigil.alerts.models import Alert
from vigil.auth.schemas import Principal, organization_forbidden
from vigil.cases.constants import CaseStatus
from vigil.cases.models import Case, CaseComment, CaseCounter, CaseEvent
from vigil.db.base import epoch_now
from vigil.db.pagination import newest_first_page
from vigil.db.upsert import increment_counter
from vigil.errors import NotFound
from vigil.investigations.models import InvestigationStep

AI_ACTOR = "vigil:ai"


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
        "modified_at": now,
    }
    if case is not None:
        for name, value in fields.items():
            setattr(case, name, value)
        _event(session, case.case_uuid, "reinvestigated", f"Investigation attempt {attempt} refreshed the analysis")
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
        f"{analysis.disposition.value} (confidence {analysis.confidence:.2f})",
    )
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
) -> tuple[list[Case], str | None]:
    query = select(Case)
    scope = principal.organization_scope
    if scope is not None:
        query = query.where(Case.organization_uuid.in_(list(scope)))
    if organization_code:
        query = query.where(Case.organization_code == organization_code.strip().upper())
    if status:
        query = query.where(Case.status == status)
    if severity:
        query = query.where(Case.severity == severity)
    return newest_first_page(session, query, Case.id, cursor, limit)


def get_case(session: Session, principal: Principal, case_ref: str) -> Case:
    try:
        condition = Case.case_uuid == uuid.UUID(case_ref)
    except ValueError:
        condition = Case.case_id == case_ref.strip().upper()
    case = session.scalar(select(Case).where(condition))
    if case is None:
        raise NotFound(f"No case {case_ref}.", code="case_not_found")
    if not principal.can_access(case.organization_uuid):
        raise organization_forbidden(case.organization_code)
    return case


def case_evidence(session: Session, case: Case) -> list[InvestigationStep]:
    """The recorded steps of the attempt that produced (or last refreshed) the case."""
    return list(
        session.scalars(
            select(InvestigationStep)
            .where(InvestigationStep.alert_uuid == case.alert_uuid, InvestigationStep.attempt == case.attempt)
            .order_by(InvestigationStep.position)
        )
    )


def case_timeline(session: Session, case: Case) -> list[CaseEvent]:
    return list(session.scalars(select(CaseEvent).where(CaseEvent.case_uuid == case.case_uuid).order_by(CaseEvent.id)))


def case_comments(session: Session, case: Case) -> list[CaseComment]:
    return list(
        session.scalars(select(CaseComment).where(CaseComment.case_uuid == case.case_uuid).order_by(CaseComment.id))
    )


def _event(session: Session, case_uuid: uuid.UUID, kind: str, message: str, actor: str = AI_ACTOR) -> None:
    session.add(CaseEvent(case_uuid=case_uuid, at=epoch_now(), actor=actor, kind=kind, message=message))
