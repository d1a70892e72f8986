"""Alert queries and status changes: tenant scoping, timeline, transitions. Intake lives in `alerts.intake`."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, insert, select, update
from sqlalchemy.orm import Session

from vigil.alerts.constants import MAX_ALERT_TYPE_LENGTH, InvestigationStatus
from vigil.alerts.models import Alert, AlertEvent
from vigil.alerts.schemas import AlertFilters
from vigil.auth.schemas import Principal
from vigil.auth.scope import get_by_reference, scoped
from vigil.db.base import epoch_now
from vigil.db.pagination import decode_cursor, encode_cursor, newest_first_page
from vigil.errors import Conflict, NotFound, ValidationFailed
from vigil.orgs import service as orgs_service
from vigil.orgs.service import organization_for


def list_alerts(
    session: Session, principal: Principal, filters: AlertFilters, cursor: str | None, limit: int
) -> tuple[list[Alert], str | None]:
    """Newest first, keyset-paginated on the internal id so deep pages stay as fast as the first."""
    return newest_first_page(session, filtered_alerts(session, principal, filters), Alert.id, cursor, limit)


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
        query = filtered_alerts(session, principal, filters)
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
    query = scoped(select(Alert).where(Alert.alert_uuid.in_(list(alert_uuids))), principal)
    return list(session.scalars(query.order_by(Alert.id.desc())))


def get_alert(session: Session, principal: Principal, reference: str) -> Alert:
    """Look up by alert_uuid or alert_id; another tenant's alert is not found (an alert_id naming an
    organization outside the principal's list is SPEC §2's 403), never data."""
    missing = NotFound(f"No alert {reference}.", code="alert_not_found")
    return get_by_reference(session, principal, Alert, Alert.alert_uuid, Alert.alert_id, reference, missing)


def alert_timeline(session: Session, alert: Alert) -> list[AlertEvent]:
    return list(
        session.scalars(select(AlertEvent).where(AlertEvent.alert_uuid == alert.alert_uuid).order_by(AlertEvent.id))
    )


def set_alert_type(session: Session, principal: Principal, alert_ref: str, alert_type: str, *, actor: str) -> Alert:
    """Give an untyped alert its type and move it Created → Submitted (SPEC §4); `investigations.flows` commits
    this, then enqueues the investigation."""
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


def _scope_to_principal(
    session: Session, principal: Principal, query: Select[Alert], organization_code: str | None
) -> Select[Alert]:
    if organization_code:
        organization = organization_for(session, principal, organization_code)
        return query.where(Alert.organization_uuid == organization.organization_uuid)
    return scoped(query, principal)


def filtered_alerts(session: Session, principal: Principal, filters: AlertFilters) -> Select[Alert]:
    """The principal's alerts matching `filters`, unordered (the list pages and the console's queue sort it)."""
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
    session.add(AlertEvent(**_status_event(alert_uuid, now, actor, InvestigationStatus(previous), to, message)))
    session.flush()
    return alert


def transition_many(
    session: Session,
    alert_uuids: Sequence[uuid.UUID],
    *,
    from_status: InvestigationStatus,
    to: InvestigationStatus,
    actor: str,
    message: str = "",
) -> list[uuid.UUID]:
    """`transition` for a batch (the engine's submitter): one conditional UPDATE and one multi-row event insert
    instead of three statements per alert. Only rows still in ``from_status`` move; returns those."""
    if not alert_uuids:
        return []
    now = epoch_now()
    moved = list(
        session.scalars(
            update(Alert)
            .where(Alert.alert_uuid.in_(list(alert_uuids)), Alert.investigation_status == int(from_status))
            .values(investigation_status=int(to), modified_at=now)
            .returning(Alert.alert_uuid)
            .execution_options(synchronize_session=False)
        )
    )
    if moved:
        events = [_status_event(alert_uuid, now, actor, from_status, to, message) for alert_uuid in moved]
        session.execute(insert(AlertEvent), events)
    return moved


def _status_event(
    alert_uuid: uuid.UUID,
    now: int,
    actor: str,
    previous: InvestigationStatus,
    to: InvestigationStatus,
    message: str,
) -> dict[str, Any]:
    """The timeline row of a status change."""
    return {
        "alert_uuid": alert_uuid,
        "at": now,
        "actor": actor,
        "kind": "status",
        "from_status": int(previous),
        "to_status": int(to),
        "message": message or f"{previous.label} → {to.label}",
    }


def delete_provider(session: Session, slug: str) -> None:
    """Remove an added provider nobody has used; built-ins and providers with alerts can only be disabled."""
    provider = orgs_service.get_provider(session, slug)
    if provider.built_in:
        raise Conflict(
            f"{provider.alert_provider} is built in; disable it instead of deleting it.", code="provider_built_in"
        )
    if session.scalar(select(Alert.alert_uuid).where(Alert.alert_provider == provider.alert_provider).limit(1)):
        raise Conflict(
            f"{provider.alert_provider} has alerts, so it cannot be deleted; disable it instead.",
            code="provider_in_use",
        )
    session.delete(provider)
    session.flush()
