"""Alert intake and queries: validation, gap-free ids, idempotency, tenant scoping, timeline."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Select, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from vigil.alerts.constants import MAX_ALERT_TYPE_LENGTH, InvestigationStatus
from vigil.alerts.models import Alert, AlertCounter, AlertEvent, IdempotencyRecord
from vigil.alerts.schemas import AlertCreate, AlertFilters, BatchItemResult, ErrorBody
from vigil.alerts.schemas import AlertOut as AlertOutSchema
from vigil.auth.schemas import Principal
from vigil.db.base import epoch_now
from vigil.db.pagination import decode_cursor, encode_cursor, newest_first_page
from vigil.db.session import Database
from vigil.db.upsert import increment_counter
from vigil.errors import Conflict, NotFound, PayloadTooLarge, ValidationFailed, VigilError, field_errors
from vigil.investigations.entities import Entities, extract_entities
from vigil.investigations.models import InvestigationAttempt, InvestigationStep
from vigil.orgs.models import Organization, Provider
from vigil.orgs.service import (
    authorize_organization,
    get_enabled_provider,
    get_organization_by_code,
    organization_for,
)
from vigil.playbooks.models import Playbook


@dataclass(frozen=True)
class IntakeLimits:
    max_content_bytes: int
    idempotency_ttl_seconds: int


@dataclass(frozen=True)
class IntakeResult:
    alert: Alert
    created: bool


@dataclass
class _TargetCache:
    """Per-request memo of organization/provider lookups (a batch names the same few many times)."""

    organizations: dict[str, Organization | None] = field(default_factory=dict)
    providers: dict[str, Provider | None] = field(default_factory=dict)

    def organization(self, session: Session, code: str) -> Organization | None:
        if code not in self.organizations:
            self.organizations[code] = get_organization_by_code(session, code)
        return self.organizations[code]

    def provider(self, session: Session, slug: str) -> Provider | None:
        if slug not in self.providers:
            self.providers[slug] = get_enabled_provider(session, slug)
        return self.providers[slug]


def create_alert(
    db: Database,
    principal: Principal,
    payload: AlertCreate,
    limits: IntakeLimits,
    idempotency_key: str | None = None,
) -> IntakeResult:
    """E1. With an idempotency key, a replay returns the first alert (created=False)."""
    request_hash = hashlib.sha256(payload.model_dump_json().encode()).hexdigest()
    for attempt in range(2):
        try:
            with db.write() as session:
                if idempotency_key is not None:
                    existing = _replayed_alert(session, principal, idempotency_key, request_hash, limits)
                    if existing is not None:
                        return IntakeResult(existing, created=False)
                organization = _authorize_target(session, principal, payload, limits, _TargetCache())
                alert = _insert_alert(session, principal, payload, organization)
                if idempotency_key is not None:
                    session.add(
                        IdempotencyRecord(
                            api_key_uuid=principal.actor_uuid,
                            idempotency_key=idempotency_key,
                            request_hash=request_hash,
                            alert_uuid=alert.alert_uuid,
                            created_at=alert.created_at,
                        )
                    )
                    session.flush()
                return IntakeResult(alert, created=True)
        except IntegrityError:
            # Only a concurrent request with the same idempotency key can collide here; the
            # whole transaction (counter included) rolled back, so re-run to answer as a replay.
            if attempt == 1 or idempotency_key is None:
                raise
    raise AssertionError("unreachable")


def create_alerts_batch(
    db: Database, principal: Principal, items: Sequence[dict[str, Any]], limits: IntakeLimits
) -> list[BatchItemResult]:
    """Create many alerts in one transaction; each item succeeds or fails on its own merits."""
    results: list[BatchItemResult] = []
    cache = _TargetCache()
    with db.write() as session:
        for index, raw in enumerate(items):
            try:
                payload = AlertCreate.model_validate(raw)
                organization = _authorize_target(session, principal, payload, limits, cache)
            except ValidationError as error:
                failure = ValidationFailed(
                    "The alert is not valid.", details=field_errors(error.errors(include_url=False))
                )
                results.append(_failed_item(index, failure))
                continue
            except VigilError as error:
                results.append(_failed_item(index, error))
                continue
            alert = _insert_alert(session, principal, payload, organization)
            results.append(BatchItemResult(index=index, status=201, alert=AlertOutSchema.model_validate(alert)))
    return results


def list_alerts(
    session: Session, principal: Principal, filters: AlertFilters, cursor: str | None, limit: int
) -> tuple[list[Alert], str | None]:
    """Newest first, keyset-paginated on the internal id so deep pages stay as fast as the first."""
    return newest_first_page(session, _filtered(session, principal, filters), Alert.id, cursor, limit)


@dataclass(frozen=True)
class AlertWindow:
    """One page of the console's alert list and the cursors of its neighbours (None at either end)."""

    alerts: list[Alert]
    older_cursor: str | None
    newer_cursor: str | None


def browse_alerts(
    session: Session,
    principal: Principal,
    filters: AlertFilters,
    *,
    older_than: str | None = None,
    newer_than: str | None = None,
    limit: int = 50,
) -> AlertWindow:
    """Keyset pages in both directions (the console's Older/Newer); each page is one index range scan."""
    if newer_than:
        boundary = decode_cursor(newer_than)
        query = _filtered(session, principal, filters)
        rows = list(session.scalars(query.where(Alert.id > boundary).order_by(Alert.id.asc()).limit(limit + 1)))
        if len(rows) > limit:
            page = list(reversed(rows[:limit]))
            has_older = session.scalar(query.with_only_columns(Alert.id).where(Alert.id < page[-1].id).limit(1))
            return AlertWindow(
                alerts=page,
                older_cursor=encode_cursor(page[-1].id) if has_older is not None else None,
                newer_cursor=encode_cursor(page[0].id),
            )
        older_than = None  # fewer than a page is newer: that is the first page
    alerts, older_cursor = list_alerts(session, principal, filters, older_than, limit)
    newer_cursor = None
    if older_than:
        newer_cursor = encode_cursor(alerts[0].id) if alerts else encode_cursor(decode_cursor(older_than) - 1)
    return AlertWindow(alerts=alerts, older_cursor=older_cursor, newer_cursor=newer_cursor)


def is_investigation_pending(alert: Alert) -> bool:
    """Will this alert's status still change without anyone acting? (Created with a type is about to be queued.)"""
    status = alert.investigation_status
    if status == InvestigationStatus.CREATED:
        return alert.alert_type is not None
    return status in (InvestigationStatus.SUBMITTED, InvestigationStatus.IN_PROGRESS)


def alerts_by_uuid(session: Session, principal: Principal, alert_uuids: Collection[uuid.UUID]) -> list[Alert]:
    """The given alerts that this principal may see (others are silently left out), newest first."""
    if not alert_uuids:
        return []
    query = select(Alert).where(Alert.alert_uuid.in_(list(alert_uuids)))
    scope = principal.organization_scope
    if scope is not None:
        query = query.where(Alert.organization_uuid.in_(list(scope)))
    return list(session.scalars(query.order_by(Alert.id.desc())))


def investigator_links(session: Session, alerts: Sequence[Alert]) -> dict[uuid.UUID, uuid.UUID]:
    """alert_uuid → playbook_uuid of the investigator playbook (one per organization, provider and type)."""
    typed = [a for a in alerts if a.alert_type is not None and a.investigator is not None]
    if not typed:
        return {}
    rows = session.execute(
        select(Playbook.playbook_uuid, Playbook.organization_uuid, Playbook.alert_provider, Playbook.alert_type).where(
            Playbook.organization_uuid.in_({a.organization_uuid for a in typed}),
            Playbook.alert_type.in_({a.alert_type for a in typed}),
        )
    ).all()
    by_key: dict[tuple[uuid.UUID, str, str | None], uuid.UUID] = {
        (org, provider, kind): playbook for playbook, org, provider, kind in rows
    }
    links: dict[uuid.UUID, uuid.UUID] = {}
    for alert in typed:
        playbook_uuid = by_key.get((alert.organization_uuid, alert.alert_provider, alert.alert_type))
        if playbook_uuid is not None:
            links[alert.alert_uuid] = playbook_uuid
    return links


def known_alert_types(session: Session, principal: Principal, limit: int = 500) -> list[str]:
    """Alert types that have an investigator in the principal's organizations (suggestions for a filter)."""
    query = select(Playbook.alert_type).distinct().order_by(Playbook.alert_type).limit(limit)
    scope = principal.organization_scope
    if scope is not None:
        query = query.where(Playbook.organization_uuid.in_(list(scope)))
    return list(session.scalars(query))


def get_alert(session: Session, principal: Principal, reference: str) -> Alert:
    """Look up by alert_uuid or alert_id; another tenant's alert is a 403, never data."""
    try:
        condition = Alert.alert_uuid == uuid.UUID(reference)
    except ValueError:
        condition = Alert.alert_id == reference.strip().upper()
    alert = session.scalar(select(Alert).where(condition))
    if alert is None:
        raise NotFound(f"No alert {reference}.", code="alert_not_found")
    principal.require_access(alert.organization_uuid, alert.organization_code)
    return alert


def alert_timeline(session: Session, alert: Alert) -> list[AlertEvent]:
    return list(
        session.scalars(select(AlertEvent).where(AlertEvent.alert_uuid == alert.alert_uuid).order_by(AlertEvent.id))
    )


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


def set_alert_type(session: Session, principal: Principal, alert_ref: str, alert_type: str, *, actor: str) -> Alert:
    """Give an untyped alert its type and move it Created → Submitted (SPEC §4).

    The caller enqueues the investigation after the commit, as a retry does; if the process dies first,
    the engine's orphan recovery finds the Submitted alert without a workflow and enqueues it.
    """
    value = alert_type.strip()
    if not 1 <= len(value) <= MAX_ALERT_TYPE_LENGTH:
        raise ValidationFailed(
            f"Enter an alert type of 1 to {MAX_ALERT_TYPE_LENGTH} characters.",
            code="invalid_alert_type",
            details=[{"field": "alert_type", "max_length": MAX_ALERT_TYPE_LENGTH}],
        )
    alert = get_alert(session, principal, alert_ref)
    if alert.alert_type is not None:
        raise Conflict(
            f"Alert {alert.alert_id} already has the type {alert.alert_type!r}; a type is set only once.",
            code="alert_type_already_set",
        )
    changed = transition(
        session,
        alert.alert_uuid,
        allowed_from={InvestigationStatus.CREATED},
        to=InvestigationStatus.SUBMITTED,
        actor=actor,
        message=f"Alert type set to {value!r}; submitted for investigation",
        alert_type=value,
    )
    if changed is None:
        raise Conflict(
            f"Alert {alert.alert_id} is {InvestigationStatus(alert.investigation_status).label}, not Created.",
            code="alert_not_created",
        )
    return changed


def _stored_entities(text: str) -> Entities | None:
    try:
        return Entities.model_validate_json(text)
    except ValidationError:
        return None


def _failed_item(index: int, error: VigilError) -> BatchItemResult:
    return BatchItemResult(
        index=index,
        status=error.status_code,
        error=ErrorBody(code=error.code, message=error.message, details=error.details),
    )


def _authorize_target(
    session: Session, principal: Principal, payload: AlertCreate, limits: IntakeLimits, cache: _TargetCache
) -> Organization:
    organization = authorize_organization(
        principal, payload.organization_code, cache.organization(session, payload.organization_code)
    )
    if cache.provider(session, payload.alert_provider) is None:
        raise ValidationFailed(
            f"Unknown alert_provider {payload.alert_provider!r}; list valid values with GET /serviceapi/providers.",
            code="unknown_alert_provider",
            details=[{"field": "alert_provider", "value": payload.alert_provider}],
        )
    content_bytes = len(payload.alert_content.encode())
    if content_bytes > limits.max_content_bytes:
        raise PayloadTooLarge(
            f"alert_content is {content_bytes} bytes; the limit is {limits.max_content_bytes} bytes.",
            code="alert_content_too_large",
            details=[{"field": "alert_content", "limit_bytes": limits.max_content_bytes}],
        )
    return organization


def _replayed_alert(
    session: Session, principal: Principal, key: str, request_hash: str, limits: IntakeLimits
) -> Alert | None:
    record = session.scalar(
        select(IdempotencyRecord).where(
            IdempotencyRecord.api_key_uuid == principal.actor_uuid, IdempotencyRecord.idempotency_key == key
        )
    )
    if record is None:
        return None
    if record.created_at <= epoch_now() - limits.idempotency_ttl_seconds:
        session.delete(record)
        session.flush()
        return None
    if record.request_hash != request_hash:
        raise Conflict(
            "This Idempotency-Key was already used with a different request body.",
            code="idempotency_key_conflict",
        )
    return session.scalar(select(Alert).where(Alert.alert_uuid == record.alert_uuid))


def _insert_alert(session: Session, principal: Principal, payload: AlertCreate, organization: Organization) -> Alert:
    sequence = increment_counter(
        session,
        AlertCounter,
        {"organization_uuid": organization.organization_uuid, "alert_provider": payload.alert_provider},
    )
    now = epoch_now()
    alert = Alert(
        alert_uuid=uuid.uuid4(),
        alert_id=f"{organization.organization_code}-{payload.alert_provider.upper()}-{sequence}",
        organization_uuid=organization.organization_uuid,
        organization_code=organization.organization_code,
        alert_provider=payload.alert_provider,
        alert_type=payload.alert_type,
        alert_content=payload.alert_content,
        created_at=now,
        created_at_source=payload.created_at_source if payload.created_at_source is not None else now,
        created_by=principal.actor_uuid,
        modified_at=now,
        investigation_status=InvestigationStatus.CREATED,
        investigation_retry_count=0,
    )
    session.add(alert)
    session.add(
        AlertEvent(
            alert_uuid=alert.alert_uuid,
            at=now,
            actor=principal.actor,
            kind="created",
            from_status=None,
            to_status=InvestigationStatus.CREATED,
            message="Alert received" + ("" if payload.alert_type else " without alert_type; not investigated"),
        )
    )
    session.flush()
    return alert


def _scope_to_principal(
    session: Session, principal: Principal, query: Select[Alert], organization_code: str | None
) -> Select[Alert]:
    if organization_code:
        organization = organization_for(session, principal, organization_code)
        return query.where(Alert.organization_uuid == organization.organization_uuid)
    scope = principal.organization_scope
    if scope is not None:
        query = query.where(Alert.organization_uuid.in_(list(scope)))
    return query


def _filtered(session: Session, principal: Principal, filters: AlertFilters) -> Select[Alert]:
    query = _scope_to_principal(session, principal, select(Alert), filters.organization_code)
    if filters.alert_provider:
        query = query.where(Alert.alert_provider == filters.alert_provider.strip().lower())
    if filters.alert_type:
        query = query.where(Alert.alert_type == filters.alert_type)
    if filters.investigation_status is not None:
        query = query.where(Alert.investigation_status == filters.investigation_status)
    if filters.created_after is not None:
        query = query.where(Alert.created_at >= filters.created_after)
    if filters.created_before is not None:
        query = query.where(Alert.created_at < filters.created_before)
    if filters.q:
        escaped = filters.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(Alert.alert_content.ilike(f"%{escaped}%", escape="\\"))
    return query


def add_timeline_event(session: Session, alert_uuid: uuid.UUID, *, actor: str, kind: str, message: str) -> None:
    """Something worth seeing next to the status changes (e.g. who was asked in chat, and their answer)."""
    session.add(AlertEvent(alert_uuid=alert_uuid, at=epoch_now(), actor=actor, kind=kind, message=message))


def transition(
    session: Session,
    alert_uuid: uuid.UUID,
    *,
    allowed_from: Collection[InvestigationStatus],
    to: InvestigationStatus,
    actor: str,
    message: str = "",
    **values: Any,
) -> Alert | None:
    """Move an alert between investigation states only from an allowed state (a conditional update).

    Returns the alert, or None when it was not in an allowed state: a replayed step, a double click
    or a second worker then changes nothing. Every change stamps modified_at and the timeline.
    """
    alert = session.scalar(select(Alert).where(Alert.alert_uuid == alert_uuid).with_for_update())
    if alert is None or alert.investigation_status not in {int(s) for s in allowed_from}:
        return None
    previous = alert.investigation_status
    now = epoch_now()
    alert.investigation_status = int(to)
    alert.modified_at = now
    for name, value in values.items():
        setattr(alert, name, value)
    session.add(
        AlertEvent(
            alert_uuid=alert_uuid,
            at=now,
            actor=actor,
            kind="status",
            from_status=previous,
            to_status=int(to),
            message=message or f"{InvestigationStatus(previous).label} → {to.label}",
        )
    )
    session.flush()
    return alert
