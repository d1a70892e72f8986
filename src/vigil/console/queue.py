"""The Alerts page as a triage queue: alerts ordered by their case's severity (or another column), the case
fields each row shows, and the "newer than" feed that streams new alerts into an open page."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from vigil.alerts import service
from vigil.alerts.models import Alert
from vigil.alerts.schemas import AlertFilters
from vigil.auth.schemas import Principal
from vigil.auth.scope import scoped
from vigil.cases.constants import CaseSeverity
from vigil.cases.models import Case

#: Critical ranks highest; an alert without a case yet (still queued or investigating, or failed) ranks below
#: informational, so a backlog of unscored alerts never pushes a critical verdict off the first page.
SEVERITY_RANK = case(
    {severity.value: rank for rank, severity in enumerate(CaseSeverity, start=1)}, value=Case.severity, else_=0
)
#: Sortable columns (the `sort` query parameter; a leading "-" sorts descending).
SORT_COLUMNS: dict[str, ColumnElement[Any] | InstrumentedAttribute[Any]] = {
    "severity": SEVERITY_RANK,
    "created": Alert.id,  # ids follow intake order, which is what the creation time records
    "org": Alert.organization_code,
    "provider": Alert.alert_provider,
    "name": Alert.alert_type,
    "status": Alert.investigation_status,
    "verdict": Case.verdict,
    "confidence": Case.ai_confidence,
    "investigator": Alert.investigator,
    "case": Case.id,
    "assignee": Case.assignee,
    "completed": Alert.completed_at,
}
#: Severity first, and within a severity the alert that has waited longest first (a queue is worked FIFO:
#: the oldest untouched alert is the one closest to breaching its response time).
DEFAULT_SORT = "-severity"
#: Newest first is the one order in which new alerts belong at the top, so the page prepends them live.
NEWEST_SORT = "-created"
#: A poll brings at most this many new alerts (the rest come with the next poll).
FEED_BATCH = 50


def parse_sort(text: str) -> str | None:
    """`text` if it names a sortable column (optionally descending), else None."""
    return text if text.removeprefix("-") in SORT_COLUMNS else None


@dataclass(frozen=True)
class QueuePage:
    """One offset page of a sorted queue; `has_next` says whether another follows."""

    alerts: list[Alert]
    has_next: bool


def sorted_page(
    session: Session, principal: Principal, filters: AlertFilters, sort: str, page: int, limit: int
) -> QueuePage:
    """A page of the queue in `sort` order (ties: oldest first). Offset paging: a sort by a case column has no
    cheap keyset, and triage views are filtered to a working set; the newest-first view keeps its keyset."""
    column = SORT_COLUMNS[sort.removeprefix("-")]
    primary = column.desc() if sort.startswith("-") else column.asc()
    query = service.filtered_alerts(session, principal, filters).outerjoin(Case, Case.alert_uuid == Alert.alert_uuid)
    query = query.order_by(primary.nulls_last(), Alert.id.asc()).offset((page - 1) * limit).limit(limit + 1)
    rows = list(session.scalars(query))
    return QueuePage(alerts=rows[:limit], has_next=len(rows) > limit)


def cases_by_alert(session: Session, principal: Principal, alerts: Sequence[Alert]) -> dict[uuid.UUID, Case]:
    """alert_uuid → its case (severity, verdict, disposition, confidence, assignee) for the rows shown."""
    if not alerts:
        return {}
    query = scoped(select(Case).where(Case.alert_uuid.in_([a.alert_uuid for a in alerts])), principal)
    return {case_row.alert_uuid: case_row for case_row in session.scalars(query)}


def last_id(session: Session, principal: Principal, filters: AlertFilters) -> int:
    """The newest matching alert's id when the page opens: the feed brings whatever arrives after it."""
    query = service.filtered_alerts(session, principal, filters).with_only_columns(func.max(Alert.id))
    return session.scalar(query) or 0


def newer_than(session: Session, principal: Principal, filters: AlertFilters, since: int) -> list[Alert]:
    """Matching alerts that arrived after `since`, oldest first (at most FEED_BATCH)."""
    query = service.filtered_alerts(session, principal, filters).where(Alert.id > since)
    return list(session.scalars(query.order_by(Alert.id.asc()).limit(FEED_BATCH)))
