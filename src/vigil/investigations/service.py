"""Database side of an investigation attempt; each function is one short transaction a workflow step calls."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session

from vigil.ai.schemas import AlertFacts, Analysis, Evidence, EvidenceKind
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.alerts.service import get_alert, transition
from vigil.auth.schemas import Principal
from vigil.cases.service import open_case_for_alert
from vigil.db.base import epoch_now
from vigil.errors import Conflict
from vigil.investigations.entities import Entities, extract_entities
from vigil.investigations.models import InvestigationAttempt, InvestigationStep
from vigil.investigations.schemas import InvestigationPlan, StepRecord
from vigil.playbooks.schemas import PlaybookDefinition
from vigil.playbooks.service import find_or_create

ENGINE_ACTOR = "vigil:engine"


class AlertGone(Exception):
    """The alert was deleted (or never existed) while its investigation was queued."""


def workflow_id_for(alert_uuid: uuid.UUID | str, attempt: int) -> str:
    """Attempt 0 runs as the alert's uuid; each re-run gets its own id so it is a new workflow."""
    return str(alert_uuid) if attempt == 0 else f"{alert_uuid}:retry-{attempt}"


def start_attempt(session: Session, alert_uuid: uuid.UUID, attempt: int) -> bool:
    """Submitted → InProgress and an attempt row; idempotent when a recovered workflow replays it.

    Returns False when the alert is no longer in a state this attempt may run in.
    """
    alert = session.get(Alert, _alert_pk(session, alert_uuid))
    if alert is None:
        raise AlertGone(str(alert_uuid))
    if alert.investigation_retry_count != attempt:
        return False
    if alert.investigation_status == InvestigationStatus.CREATED:
        # The submitter enqueues before it marks Submitted; a fast worker may get here first.
        transition(
            session,
            alert_uuid,
            allowed_from={InvestigationStatus.CREATED},
            to=InvestigationStatus.SUBMITTED,
            actor=ENGINE_ACTOR,
            message="Queued for investigation",
        )
    if alert.investigation_status == InvestigationStatus.SUBMITTED:
        transition(
            session,
            alert_uuid,
            allowed_from={InvestigationStatus.SUBMITTED},
            to=InvestigationStatus.IN_PROGRESS,
            actor=ENGINE_ACTOR,
            message=f"Investigation attempt {attempt} started",
        )
    elif alert.investigation_status != InvestigationStatus.IN_PROGRESS:
        return False
    existing = session.scalar(
        select(InvestigationAttempt).where(
            InvestigationAttempt.alert_uuid == alert_uuid, InvestigationAttempt.attempt == attempt
        )
    )
    if existing is None:
        session.add(
            InvestigationAttempt(
                alert_uuid=alert_uuid,
                attempt=attempt,
                workflow_id=workflow_id_for(alert_uuid, attempt),
                started_at=epoch_now(),
            )
        )
    return True


def prepare(
    session: Session,
    alert_uuid: uuid.UUID,
    attempt: int,
    draft: Callable[[AlertFacts, Entities], PlaybookDefinition],
) -> InvestigationPlan:
    """Extract entities and find (or have the AI draft) this alert type's playbook."""
    alert = session.get(Alert, _alert_pk(session, alert_uuid))
    if alert is None or alert.alert_type is None:
        raise AlertGone(str(alert_uuid))
    facts = AlertFacts(
        organization_code=alert.organization_code,
        alert_provider=alert.alert_provider,
        alert_type=alert.alert_type,
        alert_content=alert.alert_content,
        alert_id=alert.alert_id,
    )
    entities = extract_entities(alert.alert_content)
    playbook = find_or_create(
        session,
        organization_uuid=alert.organization_uuid,
        organization_code=alert.organization_code,
        alert_provider=alert.alert_provider,
        alert_type=alert.alert_type,
        draft=lambda: draft(facts, entities),
        actor="vigil:ai",
    )
    plan = InvestigationPlan(
        alert_uuid=alert_uuid,
        attempt=attempt,
        facts=facts,
        entities=entities,
        playbook_uuid=playbook.playbook_uuid,
        playbook_name=playbook.name,
        playbook_version=playbook.version,
        definition=playbook.definition,
    )
    record = _attempt(session, alert_uuid, attempt)
    record.playbook_uuid = playbook.playbook_uuid
    record.playbook_version = playbook.version
    record.entities = entities.model_dump_json()
    alert.investigator = playbook.name
    return plan


def organization_of(session: Session, alert_uuid: uuid.UUID) -> uuid.UUID:
    organization_uuid = session.scalar(select(Alert.organization_uuid).where(Alert.alert_uuid == alert_uuid))
    if organization_uuid is None:
        raise AlertGone(str(alert_uuid))
    return organization_uuid


def record_step(session: Session, alert_uuid: uuid.UUID, attempt: int, record: StepRecord) -> None:
    """Upsert on (alert, attempt, position): a step re-executed after a crash leaves one row."""
    row = session.scalar(
        select(InvestigationStep).where(
            InvestigationStep.alert_uuid == alert_uuid,
            InvestigationStep.attempt == attempt,
            InvestigationStep.position == record.position,
        )
    )
    if row is None:
        row = InvestigationStep(alert_uuid=alert_uuid, attempt=attempt, position=record.position)
        session.add(row)
    row.name = record.name
    row.kind = record.kind
    row.skill_id = record.skill_id
    row.connection_name = record.connection_name
    row.status = record.status.value
    row.inputs = json.dumps(record.inputs, default=str)
    row.output = json.dumps(record.output, default=str) if record.output is not None else None
    row.error = record.error
    row.started_at = record.started_at
    row.duration_ms = record.duration_ms


def as_evidence(records: list[StepRecord]) -> list[Evidence]:
    return [
        Evidence(
            step_name=r.name,
            kind=EvidenceKind.CHECKPOINT if r.kind == "checkpoint" else EvidenceKind.SKILL,
            skill_id=r.skill_id,
            status=r.status,
            output=r.output,
            error=r.error,
        )
        for r in records
        if r.kind != "analyze"
    ]


def complete(session: Session, plan: InvestigationPlan, analysis: Analysis) -> str | None:
    """Open (or refresh) the case and mark the alert Completed, in one transaction."""
    alert = session.get(Alert, _alert_pk(session, plan.alert_uuid))
    if alert is None:
        raise AlertGone(str(plan.alert_uuid))
    if alert.investigation_status == InvestigationStatus.COMPLETED:
        return alert.case_id
    case = open_case_for_alert(
        session,
        alert,
        attempt=plan.attempt,
        playbook_uuid=plan.playbook_uuid,
        playbook_version=plan.playbook_version,
        analysis=analysis,
    )
    now = epoch_now()
    transition(
        session,
        plan.alert_uuid,
        allowed_from={InvestigationStatus.IN_PROGRESS},
        to=InvestigationStatus.COMPLETED,
        actor=ENGINE_ACTOR,
        message=f"Completed: case {case.case_id}, verdict {analysis.verdict.value}",
        case_id=case.case_id,
        completed_at=now,
        failure_reason=None,
        investigator=plan.playbook_name,
    )
    attempt = _attempt(session, plan.alert_uuid, plan.attempt)
    attempt.category = analysis.category.value
    attempt.finished_at, attempt.outcome = now, "completed"
    return case.case_id


def fail(session: Session, alert_uuid: uuid.UUID, attempt: int, reason: str) -> bool:
    changed = transition(
        session,
        alert_uuid,
        allowed_from={InvestigationStatus.SUBMITTED, InvestigationStatus.IN_PROGRESS},
        to=InvestigationStatus.FAILED,
        actor=ENGINE_ACTOR,
        message=f"Failed: {reason}",
        failure_reason=reason,
    )
    record = session.scalar(
        select(InvestigationAttempt).where(
            InvestigationAttempt.alert_uuid == alert_uuid, InvestigationAttempt.attempt == attempt
        )
    )
    if record is not None:
        record.finished_at, record.outcome, record.failure_reason = epoch_now(), "failed", reason
    return changed is not None


def resubmit(session: Session, alert_uuid: uuid.UUID, *, actor: str, reason: str) -> int | None:
    """Failed → Submitted with retry count + 1; returns the new attempt number (None if not Failed)."""
    alert = transition(
        session,
        alert_uuid,
        allowed_from={InvestigationStatus.FAILED},
        to=InvestigationStatus.SUBMITTED,
        actor=actor,
        message=reason,
        failure_reason=None,
        completed_at=None,
    )
    if alert is None:
        return None
    alert.investigation_retry_count += 1
    return alert.investigation_retry_count


def _attempt(session: Session, alert_uuid: uuid.UUID, attempt: int) -> InvestigationAttempt:
    record = session.scalar(
        select(InvestigationAttempt).where(
            InvestigationAttempt.alert_uuid == alert_uuid, InvestigationAttempt.attempt == attempt
        )
    )
    if record is None:
        raise AlertGone(f"{alert_uuid} attempt {attempt}")
    return record


def _alert_pk(session: Session, alert_uuid: uuid.UUID) -> int | None:
    return session.scalar(select(Alert.id).where(Alert.alert_uuid == alert_uuid))


def request_retry(session: Session, principal: Principal, alert_ref: str) -> tuple[Alert, int]:
    """An analyst's or API client's re-run of a Failed investigation (retry count + 1)."""
    alert = get_alert(session, principal, alert_ref)
    attempt = resubmit(session, alert.alert_uuid, actor=principal.actor, reason="Re-run requested")
    if attempt is None:
        raise Conflict(
            f"Alert {alert.alert_id} is {InvestigationStatus(alert.investigation_status).label}; "
            "only Failed investigations can be retried.",
            code="investigation_not_failed",
        )
    return alert, attempt
