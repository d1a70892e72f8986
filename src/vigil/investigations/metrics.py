"""What an operator alerts on (queue, statuses, durations, checkpoint waits, skill errors), read at scrape time.

Read from the database rather than counted in process, so every API process and worker counts and a restart
loses nothing. Every query stays cheap on a million alerts: aggregates run in SQL and each scan is bounded by an
index (see `operations_snapshot`).
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, SQLColumnExpression, case, func, select
from sqlalchemy.orm import Session

from vigil.ai.schemas import EvidenceStatus
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.db.base import epoch_now
from vigil.integrations.catalog import RELATED_SKILL_ID, VIGIL_INTEGRATION_ID, canonical_skill_id, get_skill
from vigil.integrations.errors import UnknownSkillError
from vigil.investigations.checkpoints import CheckpointStatus
from vigil.investigations.models import ChatCheckpoint, InvestigationStep
from vigil.metrics import (
    DURATION_BUCKETS,
    RECENT_WINDOW_SECONDS,
    DurationWindow,
    OperationsSnapshot,
    QueueGroup,
    SkillErrors,
)

#: Statuses in which an alert waits for its investigation to start.
PENDING = (InvestigationStatus.CREATED, InvestigationStatus.SUBMITTED)
#: Statuses of work not finished: few alerts at any time, so counted over all of them.
OPEN = (*PENDING, InvestigationStatus.IN_PROGRESS)
#: Statuses of finished work: nearly every alert, so counted over the recent window only.
FINISHED = (InvestigationStatus.COMPLETED, InvestigationStatus.FAILED)
#: The integration label of Vigil's own skills (no vendor behind them).
#: The code label of failed steps recorded before steps kept their error code.
UNKNOWN_ERROR_CODE = "unknown"


def status_name(status: InvestigationStatus) -> str:
    """A readable label value instead of the API's number (`in_progress`, not 10)."""
    return status.name.lower()


def operations_snapshot(session: Session) -> OperationsSnapshot:
    """One read of everything `/metrics` reports for operations.

    Every scan is bounded by work in flight or by a 24 h window, never by the table's size. Open statuses
    (Created, Submitted, InProgress) are counted from `ix_alerts_status_id` alone (index-only ranges); the queue
    reads the rows of Created/Submitted alerts through the same index (the queue itself, plus alerts without a
    type, which stay Created and are not counted). Finished statuses, durations and skill errors cover alerts
    received in the last 24 h, reached through `ix_alerts_created_at` (and steps through their unique
    (alert, attempt, position) index): counting Completed over all time is an index-only scan of every alert
    (143 ms on a million on PostgreSQL, docs/operations.md), and an all-time histogram or error counter would read
    every alert or step per scrape, or need a running total kept by the engine. Chat checkpoints have no status
    index, but there is one row per question put to a person: orders of magnitude fewer than alerts.
    """
    now = epoch_now()
    since = now - RECENT_WINDOW_SECONDS
    waiting, oldest_wait = _checkpoint_waits(session)
    return OperationsSnapshot(
        now=now,
        queue=_queue(session),
        open_by_status=_open_by_status(session),
        finished_by_status=_finished_by_status(session, since),
        durations=_durations(session, since),
        checkpoints_waiting=waiting,
        oldest_checkpoint_created_at=oldest_wait,
        skill_errors=_skill_errors(session, since),
    )


def _queue(session: Session) -> list[QueueGroup]:
    rows = session.execute(
        select(Alert.organization_code, Alert.investigation_status, func.count(), func.min(Alert.created_at))
        .where(
            # Through the ids the (status, id) index lists: a plain status filter lets SQLite, once ANALYZE has
            # run, scan every alert instead (it assumes statuses are evenly spread).
            Alert.id.in_(select(Alert.id).where(Alert.investigation_status.in_([int(s) for s in PENDING]))),
            Alert.alert_type.is_not(None),
        )
        .group_by(Alert.organization_code, Alert.investigation_status)
    ).all()
    return [
        QueueGroup(code, status_name(InvestigationStatus(status)), int(n), int(oldest))
        for code, status, n, oldest in rows
    ]


def _open_by_status(session: Session) -> dict[str, int]:
    return _count_by_status(session, Alert.investigation_status, OPEN)


def _finished_by_status(session: Session, since: int) -> dict[str, int]:
    return _count_by_status(session, _unindexed_status(), FINISHED, Alert.created_at >= since)


def _count_by_status(
    session: Session,
    status: SQLColumnExpression[int],
    statuses: tuple[InvestigationStatus, ...],
    *window: ColumnElement[bool],
) -> dict[str, int]:
    """Alerts in each of `statuses` (0 for an empty one), optionally within a window."""
    rows = session.execute(
        select(status, func.count()).where(status.in_([int(x) for x in statuses]), *window).group_by(status)
    ).all()
    counted = {int(value): int(n) for value, n in rows}
    return {status_name(x): counted.get(int(x), 0) for x in statuses}


def _durations(session: Session, since: int) -> DurationWindow:
    duration = Alert.completed_at - Alert.created_at
    buckets = [func.coalesce(func.sum(case((duration <= bound, 1), else_=0)), 0) for bound in DURATION_BUCKETS]
    row = session.execute(
        select(func.count(), func.coalesce(func.sum(duration), 0), *buckets).where(
            Alert.created_at >= since,
            _unindexed_status() == int(InvestigationStatus.COMPLETED),
            Alert.completed_at.is_not(None),
        )
    ).one()
    return DurationWindow(cumulative=tuple(int(n) for n in row[2:]), count=int(row[0]), total_seconds=float(row[1]))


def _unindexed_status() -> ColumnElement[int]:
    """`investigation_status + 0`: keeps `ix_alerts_status_id` out of a windowed query's plan. Without statistics
    SQLite prefers an index equality (Completed: nearly every alert) over the 24 h `created_at` range."""
    return Alert.investigation_status + 0


def _checkpoint_waits(session: Session) -> tuple[int, int | None]:
    count, oldest = session.execute(
        select(func.count(), func.min(ChatCheckpoint.created_at)).where(
            ChatCheckpoint.status == CheckpointStatus.WAITING.value
        )
    ).one()
    return int(count), None if oldest is None else int(oldest)


def _skill_errors(session: Session, since: int) -> list[SkillErrors]:
    rows = session.execute(
        select(InvestigationStep.skill_id, InvestigationStep.error_code, func.count())
        .where(
            # IN (recent alerts) rather than a join: SQLite then probes the steps' (alert_uuid, …) index per recent
            # alert instead of scanning every step.
            InvestigationStep.alert_uuid.in_(select(Alert.alert_uuid).where(Alert.created_at >= since)),
            InvestigationStep.status == EvidenceStatus.ERROR.value,
            InvestigationStep.skill_id.is_not(None),
        )
        .group_by(InvestigationStep.skill_id, InvestigationStep.error_code)
    ).all()
    return [
        SkillErrors(integration_of(skill), skill, code or UNKNOWN_ERROR_CODE, int(n))
        for skill, code, n in rows
        if skill is not None
    ]


def integration_of(skill_id: str) -> str:
    """The integration that declares a skill; Vigil's own skills (and skills no longer declared) say so."""
    if canonical_skill_id(skill_id) == RELATED_SKILL_ID:
        return VIGIL_INTEGRATION_ID
    try:
        return get_skill(skill_id).integration_id
    except UnknownSkillError:
        return "unknown"
