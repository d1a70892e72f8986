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
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, Select, and_, case, func, select
from sqlalchemy.orm import Session

from vigil.ai.schemas import Severity, Verdict
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.auth.schemas import Principal
from vigil.auth.scope import scoped
from vigil.cases.constants import CaseStatus
from vigil.cases.models import Case, CaseEvent
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
from vigil.investigations.models import InvestigationAttempt
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
    """Every figure for alerts created in the last `days` UTC days, in the principal's organizations (or one)."""
    start = window_start(now, days)
    alerts = scoped(select(Alert), principal).select_from(Alert).where(Alert.created_at >= start)
    if organization_code:
        organization = organization_for(session, principal, organization_code)
        alerts = alerts.where(Alert.organization_uuid == organization.organization_uuid)
    by_severity, by_verdict = _daily(session, alerts, start, days)
    top_entities, sample = _top_entities(session, alerts)
    return Dashboard(
        days=days,
        start=start,
        end=now,
        organization_code=organization_code.strip().upper() if organization_code else None,
        alerts_by_severity=by_severity,
        cases_by_verdict=by_verdict,
        mtta=_mtta(session, alerts),
        mttr=_mttr(session, alerts),
        investigation=_investigation_time(session, alerts),
        automation=_automation(session, alerts),
        top_alert_types=_top_alert_types(session, alerts),
        top_entities=top_entities,
        entity_sample=sample,
    )


def _daily(session: Session, alerts: Select[Alert], start: int, days: int) -> tuple[Series, Series]:
    """Alerts per day (of creation) by their case's severity, and cases per day (of opening) by verdict."""
    alert_day = (Alert.created_at // DAY).label("alert_day")
    case_day = (Case.created_at // DAY).label("case_day")
    query = (
        alerts.with_only_columns(alert_day, case_day, Case.severity, Case.verdict, func.count())
        .outerjoin(Case, Case.alert_uuid == Alert.alert_uuid)
        .group_by(alert_day, case_day, Case.severity, Case.verdict)
    )
    first = start // DAY
    severity = [[0] * len(SEVERITY_KEYS) for _ in range(days)]
    verdict = [[0] * len(VERDICT_KEYS) for _ in range(days)]
    for a_day, c_day, sev, ver, count in session.execute(query):
        if 0 <= a_day - first < days:
            key = sev if sev in SEVERITY_KEYS else NOT_INVESTIGATED
            severity[a_day - first][SEVERITY_KEYS.index(key)] += count
        if c_day is not None and 0 <= c_day - first < days and ver in VERDICT_KEYS:
            verdict[c_day - first][VERDICT_KEYS.index(ver)] += count
    return _series(SEVERITY_KEYS, severity, start), _series(VERDICT_KEYS, verdict, start)


def _series(keys: list[str], counts: list[list[int]], start: int) -> Series:
    first = datetime.fromtimestamp(start, tz=UTC).date()
    return Series(keys=keys, days=[DayStack(day=first + timedelta(days=i), counts=row) for i, row in enumerate(counts)])


def _mtta(session: Session, alerts: Select[Alert]) -> MeanTime:
    """Alert created → the first thing anyone but Vigil did on its case (assign, status, disposition, comment)."""
    first_touch = (
        alerts.with_only_columns(Case.case_uuid, (func.min(CaseEvent.at) - Alert.created_at).label("seconds"))
        .join(Case, Case.alert_uuid == Alert.alert_uuid)
        .join(CaseEvent, CaseEvent.case_uuid == Case.case_uuid)
        .where(CaseEvent.actor.not_like(f"{VIGIL_ACTOR_PREFIX}%"))
        .group_by(Case.case_uuid, Alert.created_at)
        .subquery()
    )
    count, mean = session.execute(select(func.count(), func.avg(first_touch.c.seconds))).one()
    return MeanTime(count=count, of=_case_count(session, alerts), mean_seconds=_float(mean))


def _mttr(session: Session, alerts: Select[Alert]) -> MeanTime:
    """Alert created → its case closed, over cases that are closed now."""
    query = alerts.with_only_columns(func.count(), func.avg(Case.closed_at - Alert.created_at)).join(
        Case, Case.alert_uuid == Alert.alert_uuid
    )
    count, mean = session.execute(query.where(_closed())).one()
    return MeanTime(count=count, of=_case_count(session, alerts), mean_seconds=_float(mean))


def _investigation_time(session: Session, alerts: Select[Alert]) -> Percentiles:
    """Nearest-rank percentiles of created → completed, each read by the database as one ordered row.

    SQLite has no percentile function, so instead of `percentile_disc` (PostgreSQL only) both databases answer
    `ORDER BY duration LIMIT 1 OFFSET rank - 1`: exact, and no list of durations travels to Python.
    """
    duration = (Alert.completed_at - Alert.created_at).label("seconds")
    completed = alerts.where(
        Alert.investigation_status == InvestigationStatus.COMPLETED, Alert.completed_at.is_not(None)
    )
    count = session.scalar(completed.with_only_columns(func.count())) or 0

    def at_rank(share: float) -> int | None:
        if not count:
            return None
        rank = max(1, math.ceil(share * count))
        row = completed.with_only_columns(duration).order_by(duration).offset(rank - 1).limit(1)
        value = session.scalar(row)
        return None if value is None else int(value)

    return Percentiles(count=count, p50_seconds=at_rank(0.5), p95_seconds=at_rank(0.95))


def _automation(session: Session, alerts: Select[Alert]) -> Automation:
    """Closed cases split by who closed them: the `closed` event stamped at the case's `closed_at`."""
    by_person = CaseEvent.actor.like(f"{PERSON_ACTOR_PREFIX}%")
    query = (
        alerts.with_only_columns(
            func.count(func.distinct(Case.case_uuid)),
            func.count(func.distinct(case((by_person, None), else_=Case.case_uuid))),
        )
        .join(Case, Case.alert_uuid == Alert.alert_uuid)
        .join(
            CaseEvent,
            and_(CaseEvent.case_uuid == Case.case_uuid, CaseEvent.kind == "closed", CaseEvent.at == Case.closed_at),
        )
        .where(_closed())
    )
    closed, automated = session.execute(query).one()
    return Automation(closed=closed, automated=automated)


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


def _case_count(session: Session, alerts: Select[Alert]) -> int:
    query = alerts.with_only_columns(func.count()).join(Case, Case.alert_uuid == Alert.alert_uuid)
    return session.scalar(query) or 0


def _closed() -> ColumnElement[bool]:
    return and_(Case.status == CaseStatus.CLOSED.value, Case.closed_at.is_not(None))


def _float(value: object) -> float | None:
    return None if value is None else float(str(value))
