"""The orphan scan: investigations that nothing would finish by itself are set going again.

An alert Submitted or InProgress should have a workflow that is queued, running somewhere alive, or about to be
resumed. Otherwise, for its current attempt:
* no workflow at all (a crash between commit and enqueue): enqueue it;
* PENDING under an executor with no heartbeat row (its claimer died before resuming it, or it ran before this
  release's executor identity): have DBOS resume that executor's workflows;
* ERROR because its engine stopped under it (a graceful stop racing a step: the error is the stop, not the
  investigation's): DBOS resumes it from its last finished step, as if it had stayed pending;
* ended without an outcome (ERROR, CANCELLED, too many recoveries: e.g. a replay that met recorded steps this code
  does not take, `DBOSUnexpectedStepError`), or PENDING under a dead executor of another application version
  (which this version's DBOS will never resume): the attempt is failed and, within `max_auto_retries`, a fresh
  attempt (a new workflow from the first step) is submitted, both on the alert's timeline.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from dbos import DBOS
from dbos import error as dbos_errors
from sqlalchemy import select

from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.db.session import Database
from vigil.investigations import dbos_adapter, flows, service
from vigil.investigations.models import WorkerHeartbeat
from vigil.investigations.workflow import QUEUE_NOW, EngineStopped

logger = logging.getLogger("vigil.engine")
SCAN_BATCH = 200
#: DBOS states in which a workflow will never run again on its own.
ENDED_WITHOUT_OUTCOME = frozenset({"ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"})


@dataclass
class Recovered:
    enqueued: int = 0
    resumed: int = 0
    restarted: int = 0
    executors: set[str] = field(default_factory=set)


def recover_stranded(db: Database, max_auto_retries: int, stopping: Callable[[], bool]) -> Recovered:
    """One pass over every Submitted/InProgress alert, a batch at a time (until `stopping()`: a stop must not wait
    for a scan of a large backlog)."""
    recovered = Recovered()
    last_id = 0
    while not stopping():
        with db.read() as session:
            rows = session.execute(
                select(Alert.id, Alert.alert_uuid, Alert.investigation_retry_count)
                .where(
                    Alert.investigation_status.in_([InvestigationStatus.SUBMITTED, InvestigationStatus.IN_PROGRESS]),
                    Alert.id > last_id,
                )
                .order_by(Alert.id)
                .limit(SCAN_BATCH)
            ).all()
        if not rows:
            break
        last_id = rows[-1][0]
        _recover_batch(db, {service.workflow_id_for(u, a): (u, a) for _, u, a in rows}, max_auto_retries, recovered)
    for executor_id in recovered.executors:
        resumed = dbos_adapter.recover_pending_workflows(executor_id)
        logger.warning("resumed %s workflows of executor %s, which has no heartbeat", resumed, executor_id)
    if recovered.enqueued or recovered.resumed or recovered.restarted:
        logger.warning(
            "re-enqueued %s investigations that had no workflow; resumed %s stopped under their engine; gave %s a "
            "fresh attempt",
            recovered.enqueued,
            recovered.resumed,
            recovered.restarted,
        )
    return recovered


def _recover_batch(
    db: Database, attempts: dict[str, tuple[uuid.UUID, int]], max_auto_retries: int, recovered: Recovered
) -> None:
    statuses = {
        status.workflow_id: status
        for status in DBOS.list_workflows(workflow_ids=list(attempts), load_input=False, load_output=False)
    }
    stopped = _stopped_under_their_engine([w for w, status in statuses.items() if status.status == "ERROR"])
    # Read after the statuses: an executor that holds one of them registered before it dequeued it.
    with db.read() as session:
        live = set(session.scalars(select(WorkerHeartbeat.executor_id)))
    for workflow_id, (alert_uuid, attempt) in attempts.items():
        status = statuses.get(workflow_id)
        fresh_because: str | None = None
        if status is None:  # a crash between commit and enqueue (see flows)
            QUEUE_NOW.enqueue(alert_uuid, attempt)
            recovered.enqueued += 1
        elif workflow_id in stopped:
            DBOS.resume_workflow(workflow_id)
            recovered.resumed += 1
        elif status.status in ENDED_WITHOUT_OUTCOME:
            fresh_because = f"its workflow ended as {status.status} (e.g. recorded steps this version does not take)"
        elif status.status == "PENDING" and status.executor_id not in live and status.executor_id is not None:
            if status.app_version == DBOS.application_version:
                recovered.executors.add(status.executor_id)
            else:
                DBOS.cancel_workflow(workflow_id)
                fresh_because = f"it was left running by version {status.app_version}, which this version cannot resume"
        if fresh_because is not None:
            recovered.restarted += flows.restart_attempt(
                db, QUEUE_NOW, alert_uuid, attempt, fresh_because, max_auto_retries
            )


def _stopped_under_their_engine(workflow_ids: list[str]) -> set[str]:
    """The ERROR workflows whose error is their engine stopping (Vigil's `EngineStopped`, or DBOS shut down under
    them), read with their errors only for these few."""
    if not workflow_ids:
        return set()
    errored = DBOS.list_workflows(workflow_ids=workflow_ids, load_input=False, load_output=True)
    return {
        status.workflow_id
        for status in errored
        if isinstance(status.error, EngineStopped)
        or (isinstance(status.error, dbos_errors.DBOSException) and "launched" in str(status.error))
    }
