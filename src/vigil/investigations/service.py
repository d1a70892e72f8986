"""Database side of an investigation attempt; each function is one short transaction a workflow step calls."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError
from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from vigil.ai.schemas import Analysis, Evidence, EvidenceKind
from vigil.ai.transcript import Exchange, ExchangeKind, Stage
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.alerts.service import get_alert, transition
from vigil.auth.schemas import Principal
from vigil.cases.models import Case
from vigil.cases.service import open_case_for_alert
from vigil.core.entities import Entities, extract_entities
from vigil.db.base import epoch_now
from vigil.db.upsert import dialect_insert
from vigil.errors import Conflict
from vigil.evidence.signals import AlertFacts
from vigil.investigations.models import AiExchange, InvestigationAttempt, InvestigationStep
from vigil.investigations.schemas import InvestigationPlan, StepRecord
from vigil.metrics import AiUsage
from vigil.orgs.models import Organization
from vigil.playbooks.schemas import PlaybookDefinition
from vigil.playbooks.service import PlaybookRef, find_existing, find_or_create, investigator_links

ENGINE_ACTOR = "vigil:engine"
QUEUED_MESSAGE = "Queued for investigation"


class AlertGone(Exception):
    """The alert was deleted (or never existed) while its investigation was queued."""


def workflow_id_for(alert_uuid: uuid.UUID | str, attempt: int) -> str:
    """Attempt 0 runs as the alert's uuid; each re-run gets its own id so it is a new workflow."""
    return str(alert_uuid) if attempt == 0 else f"{alert_uuid}:retry-{attempt}"


def _start(session: Session, alert: Alert, attempt: int) -> InvestigationAttempt | None:
    """Submitted → InProgress and the attempt row; idempotent when a recovered workflow replays it.

    None when the alert is no longer in a state this attempt may run in (a stale attempt).
    """
    alert_uuid = alert.alert_uuid
    if alert.investigation_retry_count != attempt:
        return None

    def advance(before: InvestigationStatus, after: InvestigationStatus, message: str) -> None:
        transition(session, alert_uuid, allowed_from={before}, to=after, actor=ENGINE_ACTOR, message=message)

    if alert.investigation_status == InvestigationStatus.CREATED:
        # The submitter enqueues before it marks Submitted; a fast worker may get here first.
        advance(InvestigationStatus.CREATED, InvestigationStatus.SUBMITTED, QUEUED_MESSAGE)
    if alert.investigation_status == InvestigationStatus.SUBMITTED:
        started = "Investigation started" if attempt == 0 else f"Investigation started (retry {attempt})"
        advance(InvestigationStatus.SUBMITTED, InvestigationStatus.IN_PROGRESS, started)
    elif alert.investigation_status != InvestigationStatus.IN_PROGRESS:
        return None
    existing = _find_attempt(session, alert_uuid, attempt)
    if existing is not None:
        return existing
    record = InvestigationAttempt(
        alert_uuid=alert_uuid,
        attempt=attempt,
        workflow_id=workflow_id_for(alert_uuid, attempt),
        started_at=epoch_now(),
    )
    session.add(record)
    return record


class PrepareContext(BaseModel):
    """What drafting needs to know, read before any write transaction opens."""

    facts: AlertFacts
    entities: Entities
    organization_uuid: uuid.UUID
    has_playbook: bool


def load_for_prepare(session: Session, alert_uuid: uuid.UUID) -> PrepareContext:
    """The alert's facts and entities, and whether its type already has a playbook (else it must be drafted)."""
    return _context(session, _typed_alert(session, alert_uuid))[0]


def _context(session: Session, alert: Alert) -> tuple[PrepareContext, PlaybookRef | None]:
    """What preparing needs, and the type's current playbook if it has one."""
    assert alert.alert_type is not None
    facts = AlertFacts(
        organization_code=alert.organization_code,
        alert_provider=alert.alert_provider,
        alert_type=alert.alert_type,
        alert_content=alert.alert_content,
        alert_id=alert.alert_id,
    )
    existing = find_existing(session, alert.organization_uuid, alert.alert_provider, alert.alert_type)
    context = PrepareContext(
        facts=facts,
        entities=extract_entities(alert.alert_content),
        organization_uuid=alert.organization_uuid,
        has_playbook=existing is not None,
    )
    return context, existing


class Begun(BaseModel):
    """How an attempt began: not at all (stale), with its plan, or with what drafting a playbook needs."""

    started: bool
    plan: InvestigationPlan | None = None
    context: PrepareContext | None = None


def begin(session: Session, alert_uuid: uuid.UUID, attempt: int) -> Begun:
    """Start the attempt, load what preparing needs and, when the type has a playbook, pin it: one transaction.

    The common case (the type has a playbook) then costs one step and one commit instead of three; only the
    first alert of a type leaves `context` for drafting, which must happen outside any transaction.
    """
    alert = _alert(session, alert_uuid)
    record = _start(session, alert, attempt)
    if record is None:
        return Begun(started=False)
    if alert.alert_type is None:
        raise AlertGone(str(alert_uuid))
    context, playbook = _context(session, alert)
    if playbook is None:
        return Begun(started=True, context=context)
    return Begun(started=True, plan=_pin(alert, record, context, playbook))


def prepare(
    session: Session,
    context: PrepareContext,
    alert_uuid: uuid.UUID,
    attempt: int,
    drafted: PlaybookDefinition | None,
    note: str,
) -> InvestigationPlan | None:
    """Store the drafted playbook unless this type has one by now, and pin the attempt to a playbook version.

    None when the type has no playbook and nothing was drafted (it was deleted after `load_for_prepare` looked):
    the caller drafts and comes back.
    """
    alert = _typed_alert(session, alert_uuid)
    assert alert.alert_type is not None
    playbook = find_or_create(
        session,
        organization_uuid=alert.organization_uuid,
        organization_code=alert.organization_code,
        alert_provider=alert.alert_provider,
        alert_type=alert.alert_type,
        definition=drafted,
        actor="vigil:ai",
        note=note,
    )
    if playbook is None:
        return None
    return _pin(alert, _attempt(session, alert_uuid, attempt), context, playbook)


def _pin(
    alert: Alert, record: InvestigationAttempt, context: PrepareContext, playbook: PlaybookRef
) -> InvestigationPlan:
    """Pin the attempt to the playbook's current version; the plan every later step runs."""
    record.playbook_uuid = playbook.playbook_uuid
    record.playbook_version = playbook.version
    record.entities = context.entities.model_dump_json()
    alert.investigator = playbook.name
    return InvestigationPlan(
        alert_uuid=alert.alert_uuid,
        attempt=record.attempt,
        facts=context.facts,
        entities=context.entities,
        playbook_uuid=playbook.playbook_uuid,
        playbook_name=playbook.name,
        playbook_version=playbook.version,
        definition=playbook.definition,
        organization_uuid=context.organization_uuid,
    )


def record_exchange(
    session: Session, alert_uuid: uuid.UUID, attempt: int, seq: int, organization_uuid: uuid.UUID, exchange: Exchange
) -> None:
    """Upsert on (alert, attempt, stage, seq): a call re-executed after a crash leaves one row."""
    row = session.scalar(
        select(AiExchange).where(
            AiExchange.alert_uuid == alert_uuid,
            AiExchange.attempt == attempt,
            AiExchange.stage == exchange.stage.value,
            AiExchange.seq == seq,
        )
    )
    if row is None:
        row = AiExchange(
            alert_uuid=alert_uuid,
            attempt=attempt,
            stage=exchange.stage.value,
            seq=seq,
            organization_uuid=organization_uuid,
        )
        session.add(row)
    row.kind = exchange.kind.value
    row.model = exchange.model
    row.request = json.dumps(exchange.request, default=str)
    row.response = json.dumps(exchange.response, default=str) if exchange.response is not None else None
    row.error, row.error_kind = exchange.error, exchange.error_kind
    row.retries = json.dumps(exchange.retries)
    row.input_tokens, row.output_tokens, row.cost_usd = exchange.input_tokens, exchange.output_tokens, exchange.cost_usd
    row.started_at, row.duration_ms = exchange.started_at, exchange.duration_ms


def exchanges_of(session: Session, alert_uuid: uuid.UUID, attempt: int | None = None) -> list[Exchange]:
    """An investigation's model requests and tool calls in order: drafting first, then the analysis.

    Without `attempt`, every attempt's (a re-run's calls cost tokens too).
    """
    query = select(AiExchange).where(AiExchange.alert_uuid == alert_uuid)
    if attempt is not None:
        query = query.where(AiExchange.attempt == attempt)
    stage_order = case((AiExchange.stage == Stage.DRAFT.value, 0), else_=1)
    rows = session.scalars(query.order_by(AiExchange.attempt, stage_order, AiExchange.seq))
    return [
        Exchange(
            kind=ExchangeKind(row.kind),
            stage=Stage(row.stage),
            model=row.model,
            request=json.loads(row.request),
            response=json.loads(row.response) if row.response is not None else None,
            error=row.error,
            error_kind=row.error_kind,
            retries=json.loads(row.retries),
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            cost_usd=row.cost_usd,
            started_at=row.started_at,
            duration_ms=row.duration_ms,
            attempt=row.attempt,
        )
        for row in rows
    ]


def organization_of(session: Session, alert_uuid: uuid.UUID) -> uuid.UUID:
    organization_uuid = session.scalar(select(Alert.organization_uuid).where(Alert.alert_uuid == alert_uuid))
    if organization_uuid is None:
        raise AlertGone(str(alert_uuid))
    return organization_uuid


def record_step(session: Session, alert_uuid: uuid.UUID, attempt: int, record: StepRecord) -> None:
    """Upsert on (alert, attempt, position): a step re-executed after a crash leaves one row.

    One `INSERT … ON CONFLICT DO UPDATE` (PostgreSQL and SQLite spell it alike) instead of a read then a write:
    every step of every investigation comes through here.
    """
    values: dict[str, object] = {
        "name": record.name,
        "kind": record.kind,
        "skill_id": record.skill_id,
        "connection_name": record.connection_name,
        "status": record.status.value,
        "inputs": json.dumps(record.inputs, default=str),
        "output": json.dumps(record.output, default=str) if record.output is not None else None,
        "error": record.error,
        "error_code": record.error_code,
        "started_at": record.started_at,
        "duration_ms": record.duration_ms,
    }
    statement = dialect_insert(session, InvestigationStep).values(
        alert_uuid=alert_uuid, attempt=attempt, position=record.position, **values
    )
    session.execute(statement.on_conflict_do_update(index_elements=["alert_uuid", "attempt", "position"], set_=values))


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
    alert = _alert(session, plan.alert_uuid)
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
    record = _find_attempt(session, alert_uuid, attempt)
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
    record = _find_attempt(session, alert_uuid, attempt)
    if record is None:
        raise AlertGone(f"{alert_uuid} attempt {attempt}")
    return record


def _find_attempt(session: Session, alert_uuid: uuid.UUID, attempt: int) -> InvestigationAttempt | None:
    return session.scalar(
        select(InvestigationAttempt).where(
            InvestigationAttempt.alert_uuid == alert_uuid, InvestigationAttempt.attempt == attempt
        )
    )


def _alert(session: Session, alert_uuid: uuid.UUID) -> Alert:
    """The alert row in one query (AlertGone when it was deleted while its investigation was queued)."""
    alert = session.scalar(select(Alert).where(Alert.alert_uuid == alert_uuid))
    if alert is None:
        raise AlertGone(str(alert_uuid))
    return alert


def _typed_alert(session: Session, alert_uuid: uuid.UUID) -> Alert:
    alert = _alert(session, alert_uuid)
    if alert.alert_type is None:
        raise AlertGone(str(alert_uuid))
    return alert


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


def ai_usage(session: Session) -> tuple[list[AiUsage], list[tuple[str, str, int]]]:
    """AI exchanges summed per organization, model, kind and outcome; and investigations per organization and
    model (each attempt that made a model request counts once)."""
    outcome = case((AiExchange.error_kind.is_(None), "ok"), else_=AiExchange.error_kind)
    code = Organization.organization_code
    joined = select(AiExchange).join(Organization, Organization.organization_uuid == AiExchange.organization_uuid)
    rows = session.execute(
        joined.with_only_columns(
            code,
            AiExchange.model,
            AiExchange.kind,
            outcome,
            func.count(),
            func.coalesce(func.sum(AiExchange.input_tokens), 0),
            func.coalesce(func.sum(AiExchange.output_tokens), 0),
            func.coalesce(func.sum(AiExchange.cost_usd), 0.0),
        ).group_by(code, AiExchange.model, AiExchange.kind, outcome)
    ).all()
    usage = [AiUsage(r[0], r[1], r[2], r[3], int(r[4]), int(r[5]), int(r[6]), float(r[7])) for r in rows]
    attempts = (
        joined.with_only_columns(code.label("code"), AiExchange.model, AiExchange.alert_uuid, AiExchange.attempt)
        .where(AiExchange.kind == ExchangeKind.MODEL.value)
        .distinct()
        .subquery()
    )
    counted = session.execute(
        select(attempts.c.code, attempts.c.model, func.count()).group_by(attempts.c.code, attempts.c.model)
    ).all()
    return usage, [(r[0], r[1], int(r[2])) for r in counted]


@dataclass(frozen=True)
class AttemptRecord:
    """One investigation attempt of an alert with the steps it recorded, in playbook order."""

    attempt: InvestigationAttempt
    steps: list[InvestigationStep]


@dataclass(frozen=True)
class AlertInvestigation:
    """Everything the alert detail shows about its investigation."""

    attempts: list[AttemptRecord]  # newest first
    entities: Entities
    entities_from_investigation: bool  # False: extracted now from the content (never investigated yet)
    playbook_uuid: uuid.UUID | None


def alert_investigation(session: Session, alert: Alert) -> AlertInvestigation:
    attempts = list(
        session.scalars(
            select(InvestigationAttempt)
            .where(InvestigationAttempt.alert_uuid == alert.alert_uuid)
            .order_by(InvestigationAttempt.attempt.desc())
        )
    )
    steps: dict[int, list[InvestigationStep]] = {}
    for step in session.scalars(
        select(InvestigationStep)
        .where(InvestigationStep.alert_uuid == alert.alert_uuid)
        .order_by(InvestigationStep.attempt, InvestigationStep.position)
    ):
        steps.setdefault(step.attempt, []).append(step)
    records = [AttemptRecord(attempt=a, steps=steps.get(a.attempt, [])) for a in attempts]
    stored = next((a.entities for a in attempts if a.entities and a.entities != "{}"), None)
    entities = _stored_entities(stored) if stored is not None else None
    playbook_uuid = next((a.playbook_uuid for a in attempts if a.playbook_uuid is not None), None)
    if playbook_uuid is None:
        playbook_uuid = investigator_links(session, [alert]).get(alert.alert_uuid)
    return AlertInvestigation(
        attempts=records,
        entities=entities if entities is not None else extract_entities(alert.alert_content),
        entities_from_investigation=entities is not None,
        playbook_uuid=playbook_uuid,
    )


def _stored_entities(text: str) -> Entities | None:
    try:
        return Entities.model_validate_json(text)
    except ValidationError:
        return None


def case_evidence(session: Session, case: Case) -> list[InvestigationStep]:
    """The recorded steps of the attempt that produced (or last refreshed) the case."""
    return list(
        session.scalars(
            select(InvestigationStep)
            .where(InvestigationStep.alert_uuid == case.alert_uuid, InvestigationStep.attempt == case.attempt)
            .order_by(InvestigationStep.position)
        )
    )


def case_entities(session: Session, case: Case) -> Entities:
    """The entities the case's attempt investigated (extracted again from the alert if it stored none)."""
    stored = session.scalar(
        select(InvestigationAttempt.entities).where(
            InvestigationAttempt.alert_uuid == case.alert_uuid, InvestigationAttempt.attempt == case.attempt
        )
    )
    entities = _stored_entities(stored) if stored and stored != "{}" else None
    if entities is not None:
        return entities
    return extract_entities(
        session.scalar(select(Alert.alert_content).where(Alert.alert_uuid == case.alert_uuid)) or ""
    )
