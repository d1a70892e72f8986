"""The dashboard's figures, aggregated in SQL over one window of alerts.

The window selects alerts by `created_at` (indexed), and everything else is reached from those alerts: their
cases through the unique `cases.alert_uuid`, case timelines through `case_events.case_uuid`, entities through
the attempt's `(alert_uuid, attempt)` key. So the cost follows the window, not the size of the tables, and
every query starts from one scoped `select(Alert)`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, Select, and_, case, func, select
from sqlalchemy.orm import Session

from vigil.ai.schemas import Severity, Verdict
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert, AlertCounter
from vigil.auth.schemas import Principal
from vigil.auth.scope import scoped
from vigil.cases.constants import CaseStatus
from vigil.cases.models import Case, CaseCounter, CaseEvent
from vigil.dashboard.schemas import (
    NOT_INVESTIGATED,
    Automation,
    Dashboard,
    DayStack,
    MeanTime,
    Percentiles,
    Ranked,
    Series,
)
from vigil.integrations.models import Connection
from vigil.investigations.models import InvestigationAttempt
from vigil.orgs import service as orgs_service
from vigil.orgs.schemas import OrganizationSummary
from vigil.orgs.service import organization_for

DAY = 86_400
TOP = 10
#: Entities are JSON per attempt, so they are counted in Python over at most this many alerts (the newest).
ENTITY_SAMPLE = 2_000
#: Timeline actors that are Vigil itself (engine, built-in or LLM analyst); anyone else is a person or a client.
VIGIL_ACTOR_PREFIX = "vigil:"
#: Console users act as `user:<email>`; API clients (SOAR, scripts) as `api_key:<name>`.
PERSON_ACTOR_PREFIX = "user:"
SEVERITY_KEYS = [s.value for s in reversed(Severity)] + [NOT_INVESTIGATED]
VERDICT_KEYS = [v.value for v in Verdict]


def window_start(now: int, days: int) -> int:
    """00:00 UTC of the first of `days` calendar days ending today (UTC)."""
    return (now // DAY - days + 1) * DAY


def build_dashboard(
    session: Session, principal: Principal, *, days: int, now: int, organization_code: str | None = None
) -> Dashboard:
    """Every figure for alerts created in the last `days` UTC days, in the principal's organizations (or one).

    Four queries over the window: volumes (with the sums behind MTTA, MTTR and the automation rate folded in),
    investigation durations, alert types, and the newest alerts' entities.
    """
    start = window_start(now, days)
    alerts = scoped(select(Alert), principal).select_from(Alert).where(Alert.created_at >= start)
    if organization_code:
        organization = organization_for(session, principal, organization_code)
        alerts = alerts.where(Alert.organization_uuid == organization.organization_uuid)
    volumes = _volumes(session, alerts, start, days)
    top_entities, sample = _top_entities(session, alerts)
    return Dashboard(
        days=days,
        organization_code=organization_code.strip().upper() if organization_code else None,
        alerts_by_severity=volumes.by_severity,
        cases_by_verdict=volumes.by_verdict,
        mtta=_mean(volumes.acknowledged, volumes.acknowledged_seconds, volumes.cases),
        mttr=_mean(volumes.closed, volumes.closed_seconds, volumes.cases),
        investigation=_investigation_time(session, alerts),
        automation=Automation(closed=volumes.closed, automated=volumes.closed - volumes.closed_by_person),
        top_alert_types=_top_alert_types(session, alerts),
        top_entities=top_entities,
        entity_sample=sample,
    )


@dataclass
class _Volumes:
    by_severity: Series
    by_verdict: Series
    cases: int
    closed: int
    closed_seconds: int  # sum over closed cases of alert created → case closed
    closed_by_person: int
    acknowledged: int
    acknowledged_seconds: int  # sum over acknowledged cases of alert created → first action


def _volumes(session: Session, alerts: Select[Alert], start: int, days: int) -> _Volumes:
    """One grouped pass over the window's alerts and their cases: alerts per day (of creation) by severity,
    cases per day (of opening) by verdict, and the sums behind MTTA, MTTR and the automation rate.

    A case is acknowledged at the first event on its timeline by anyone but Vigil, and closed by a person when
    the `closed` event stamped at its `closed_at` is a console user's; both are index lookups by case.
    """
    alert_day = (Alert.created_at // DAY).label("alert_day")
    case_day = (Case.created_at // DAY).label("case_day")
    closed = _closed()
    first_action = (
        select(func.min(CaseEvent.at))
        .where(CaseEvent.case_uuid == Case.case_uuid, CaseEvent.actor.not_like(f"{VIGIL_ACTOR_PREFIX}%"))
        .correlate(Case)
        .scalar_subquery()
    )
    closed_by_person = (
        select(CaseEvent.id)
        .where(
            CaseEvent.case_uuid == Case.case_uuid,
            CaseEvent.kind == "closed",
            CaseEvent.at == Case.closed_at,
            CaseEvent.actor.like(f"{PERSON_ACTOR_PREFIX}%"),
        )
        .correlate(Case)
        .exists()
    )
    query = (
        alerts.with_only_columns(
            alert_day,
            case_day,
            Case.severity,
            Case.verdict,
            func.count(),
            func.sum(case((closed, 1), else_=0)),
            func.sum(case((closed, Case.closed_at - Alert.created_at), else_=0)),
            func.sum(case((and_(closed, closed_by_person), 1), else_=0)),
            func.count(first_action),
            func.sum(first_action - Alert.created_at),
        )
        .outerjoin(Case, Case.alert_uuid == Alert.alert_uuid)
        .group_by(alert_day, case_day, Case.severity, Case.verdict)
    )
    first = start // DAY
    severity = [[0] * len(SEVERITY_KEYS) for _ in range(days)]
    verdict = [[0] * len(VERDICT_KEYS) for _ in range(days)]
    volumes = _Volumes(Series(keys=[], days=[]), Series(keys=[], days=[]), 0, 0, 0, 0, 0, 0)
    for a_day, c_day, sev, ver, count, n_closed, seconds, by_person, acked, acked_seconds in session.execute(query):
        if 0 <= a_day - first < days:
            key = sev if sev in SEVERITY_KEYS else NOT_INVESTIGATED
            severity[a_day - first][SEVERITY_KEYS.index(key)] += count
        if c_day is None:
            continue
        volumes.cases += count
        volumes.closed += int(n_closed or 0)
        volumes.closed_seconds += int(seconds or 0)
        volumes.closed_by_person += int(by_person or 0)
        volumes.acknowledged += int(acked or 0)
        volumes.acknowledged_seconds += int(acked_seconds or 0)
        if 0 <= c_day - first < days and ver in VERDICT_KEYS:
            verdict[c_day - first][VERDICT_KEYS.index(ver)] += count
    volumes.by_severity = _series(SEVERITY_KEYS, severity, start)
    volumes.by_verdict = _series(VERDICT_KEYS, verdict, start)
    return volumes


def _series(keys: list[str], counts: list[list[int]], start: int) -> Series:
    first = datetime.fromtimestamp(start, tz=UTC).date()
    return Series(keys=keys, days=[DayStack(day=first + timedelta(days=i), counts=row) for i, row in enumerate(counts)])


def _investigation_time(session: Session, alerts: Select[Alert]) -> Percentiles:
    """Exact nearest-rank percentiles of created → completed.

    SQLite has no percentile function (PostgreSQL's `percentile_disc` would not run on it), so the database
    returns each distinct duration with its count (seconds: far fewer values than alerts) and Python walks the
    cumulative counts.
    """
    duration = (Alert.completed_at - Alert.created_at).label("seconds")
    query = (
        alerts.with_only_columns(duration, func.count())
        .where(Alert.investigation_status == InvestigationStatus.COMPLETED, Alert.completed_at.is_not(None))
        .group_by(duration)
        .order_by(duration)
    )
    counted = [(int(seconds), int(n)) for seconds, n in session.execute(query) if seconds is not None]
    total = sum(n for _, n in counted)

    def at_rank(share: float) -> int | None:
        rank, seen = max(1, math.ceil(share * total)), 0
        for seconds, n in counted:
            seen += n
            if seen >= rank:
                return seconds
        return None

    return Percentiles(count=total, p50_seconds=at_rank(0.5), p95_seconds=at_rank(0.95))


def _top_alert_types(session: Session, alerts: Select[Alert]) -> list[Ranked]:
    count = func.count().label("n")
    query = (
        alerts.with_only_columns(Alert.alert_type, count)
        .group_by(Alert.alert_type)
        .order_by(count.desc(), Alert.alert_type)
        .limit(TOP)
    )
    return [Ranked(label=alert_type or "(untyped)", count=n) for alert_type, n in session.execute(query)]


def _top_entities(session: Session, alerts: Select[Alert]) -> tuple[list[Ranked], int]:
    """The subject entities (what an alert is about: its user, host, remote address, file) of the newest
    investigated alerts, each counted once per alert."""
    query = (
        alerts.with_only_columns(Alert.id, InvestigationAttempt.entities)
        .join(
            InvestigationAttempt,
            and_(
                InvestigationAttempt.alert_uuid == Alert.alert_uuid,
                InvestigationAttempt.attempt == Alert.investigation_retry_count,
            ),
        )
        .order_by(Alert.id.desc())
        .limit(ENTITY_SAMPLE)
    )
    counts: Counter[tuple[str, str]] = Counter()
    sample = 0
    for _, text in session.execute(query):
        sample += 1
        counts.update({(kind, value) for kind, values in _subjects(text).items() for value in values})
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP]
    return [Ranked(label=value, kind=kind, count=n) for (kind, value), n in ranked], sample


def _subjects(text: str) -> dict[str, list[str]]:
    try:
        stored = json.loads(text)
    except ValueError:
        return {}
    subjects = stored.get("subjects") if isinstance(stored, dict) else None
    if not isinstance(subjects, dict):
        return {}
    return {str(kind): [str(v) for v in values] for kind, values in subjects.items() if isinstance(values, list)}


def _closed() -> ColumnElement[bool]:
    return and_(Case.status == CaseStatus.CLOSED.value, Case.closed_at.is_not(None))


def _mean(count: int, total_seconds: int, of: int) -> MeanTime:
    return MeanTime(count=count, of=of, mean_seconds=total_seconds / count if count else None)


def organization_overview(session: Session) -> list[OrganizationSummary]:
    """Every organization with its alert, case and connection counts.

    Alert and case numbers are gap-free per-organization counters, so their sums are the totals without
    scanning the alerts table.
    """
    alert_totals = select(AlertCounter.organization_uuid, func.sum(AlertCounter.last_value)).group_by(
        AlertCounter.organization_uuid
    )
    alerts = {org: total for org, total in session.execute(alert_totals)}
    cases = {
        org: total for org, total in session.execute(select(CaseCounter.organization_uuid, CaseCounter.last_value))
    }
    connection_counts = select(Connection.organization_uuid, func.count()).group_by(Connection.organization_uuid)
    connections = {org: total for org, total in session.execute(connection_counts)}
    return [
        OrganizationSummary(
            organization_uuid=o.organization_uuid,
            organization_code=o.organization_code,
            name=o.name,
            created_at=o.created_at,
            modified_at=o.modified_at,
            alerts=int(alerts.get(o.organization_uuid) or 0),
            cases=int(cases.get(o.organization_uuid) or 0),
            connections=int(connections.get(o.organization_uuid) or 0),
        )
        for o in orgs_service.list_organizations(session)
    ]
