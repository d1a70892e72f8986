"""Every state change that a workflow must hear about: first it commits, then the workflow is enqueued or woken.

The two cannot share one transaction (DBOS has its own database), so each use case here commits first and
dispatches after, and a crash between the two is what the rest of the engine is built to absorb. Starting an
investigation attempt:

* The commit leaves the alert Submitted with the attempt number the workflow will run under. A process that dies
  before the enqueue leaves a Submitted alert without a workflow; the orphan scan (`recovery.recover_stranded`,
  at every engine start and then every minute, in any engine) finds it and enqueues that attempt.
* Enqueuing twice is harmless: the workflow id is derived from the alert and attempt
  (`service.workflow_id_for`), so the scan racing a late enqueue, or two scans, start one workflow.
* A request does not enqueue itself: it hands the attempt to its process's engine (`Engine.enqueue`), whose
  submitter thread enqueues it, because DBOS retries without a deadline while its database is away and a request
  must not wait on that. A process without an engine (an API-only `vigil serve` beside `vigil worker`s) only
  commits, and a worker's orphan scan enqueues.
* E1 is the exception in order, for throughput: intake only commits the alert Created, and the submitter enqueues
  a batch of Created alerts *before* it marks them Submitted in one statement. A crash in between leaves Created
  alerts that already have a workflow: the next pass enqueues them again (a no-op) and marks them, and a worker
  that gets there first moves Created → Submitted itself (`service._start`).
* Inside a workflow (the automatic re-run of a transient failure) the commit is a recorded step, so a crash after
  it replays the workflow up to the enqueue.

Which one enqueues is the caller's `Enqueuer`: the engine (a hand-off) for requests, `workflow.QUEUE_NOW` on
engine threads and in workflows.

Asking a Chat Checkpoint's question, inside the investigation's workflow (`ask_checkpoint`, the recorded step
`vigil.ask_checkpoint`, then `wait_for_answer`): the checkpoint row commits `asking`, the question is sent
through the organization's chat provider, the row commits `waiting` with whom and where it was asked (the
"asked" record, or `failed` with the cause), and then the rest of the playbook is handed to the workflow that
waits for the answer (`<attempt>:checkpoint-<n>`).

* A crash before the "asked" record commits (after `asking`, before or after the question went out) replays the
  step: it finds the row still `asking` and asks again rather than risk never asking (a question sent in the few
  milliseconds before the crash is then asked twice). After it, the replay finds the row `waiting` (or `failed`)
  and never asks again: the step's outcome is rebuilt from the row.
* A crash after the step is recorded and before the waiting workflow is started replays the workflow up to the
  start: the waiting workflow's id is derived from the attempt and the step, so starting it twice starts one.
* The person may answer before the "asked" record commits (the question is live as soon as the provider posts
  it): see below; recording the question applies that answer in the same transaction, the row goes straight to
  `answered`, and the waiting workflow, started after, finds it so and nobody needs waking.

Answering a Chat Checkpoint (`receive_chat_delivery`, which every provider's inbound route is handed by its HTTP
edge): the delivery's record (the chat product's own deliveries row, keyed by its event id or press),
the conditional `waiting → answered` and its timeline line commit in one transaction; then the waiting workflow
is woken through the `Waker` (DBOS's client, `checkpoints.WorkflowWaker`).

* A crash (or a DBOS outage) after the commit and before the wake-up leaves the row answered with nobody told:
  the waiting workflow re-reads the row between slices of at most `workflow.CHECKPOINT_SLICE_SECONDS` (15 s) and
  goes on, so the answer is late by at most a slice, never lost. Without a waker, that poll is the only way.
  The sender gets its 200 either way: its retry would only be a duplicate.
* A crash before the commit records nothing: the provider's retry of the same delivery is processed as new. A
  retry after the commit is recorded once (the delivery's key) and answers nothing; the answer itself is a
  conditional update from `waiting`, so a second press, a late reply or an answer after the timeout changes
  nothing, and a wake-up is sent at most once per checkpoint (DBOS idempotency key `cp-<checkpoint>`).
* An answer that arrives while the question is still being recorded (`asking`) commits as an early answer and
  wakes nobody: recording the question applies it and the waiting workflow, started after that, finds the row
  answered.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Protocol

from sqlalchemy import select

from vigil.alerts import service as alerts
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.auth.schemas import Principal
from vigil.db.session import Database
from vigil.integrations.chat import ChatDelivery, RecordDelivery
from vigil.investigations import checkpoints, service
from vigil.investigations.checkpoints import Wake
from vigil.investigations.schemas import CheckpointAsk, InvestigationPlan
from vigil.investigations.service import ENGINE_ACTOR, QUEUED_MESSAGE
from vigil.investigations.steps import OpenedQuestion, QuestionNotSent, StepRunner
from vigil.playbooks.schemas import CheckpointStep

logger = logging.getLogger("vigil.chat.inbound")

RECOVERY_ACTOR = "vigil:recovery"
SUBMIT_BATCH = 200


class Enqueuer(Protocol):
    def enqueue(self, alert_uuid: uuid.UUID, attempt: int) -> None:
        """Put the attempt's workflow on the investigation queue (idempotent, see the module docstring)."""


class Waker(Protocol):
    def send(self, workflow_id: str, checkpoint_uuid: uuid.UUID) -> None:
        """Tell the workflow waiting at the checkpoint that it was answered (idempotent per checkpoint)."""


def retry_investigation(db: Database, queue: Enqueuer | None, principal: Principal, alert_ref: str) -> Alert:
    """An analyst's or API client's re-run of a Failed investigation (retry count + 1)."""
    with db.write() as session:
        alert, attempt = service.request_retry(session, principal, alert_ref)
    _enqueue_committed(queue, alert.alert_uuid, attempt)
    return alert


def set_alert_type(
    db: Database, queue: Enqueuer | None, principal: Principal, alert_ref: str, alert_type: str
) -> Alert:
    """Give an untyped alert its type: Created → Submitted, then investigated like a retry."""
    with db.write() as session:
        alert = alerts.set_alert_type(session, principal, alert_ref, alert_type, actor=principal.actor)
    _enqueue_committed(queue, alert.alert_uuid, alert.investigation_retry_count)
    return alert


def restart_attempt(
    db: Database, queue: Enqueuer, alert_uuid: uuid.UUID, attempt: int, reason: str, max_auto_retries: int
) -> int:
    """Fail an attempt no workflow will finish and submit a fresh one (within the automatic re-run budget);
    1 if it was re-submitted.

    The alert row is locked and its attempt checked first, so two engines scanning at once change it once."""
    with db.write() as session:
        current = session.scalar(
            select(Alert.investigation_retry_count).where(Alert.alert_uuid == alert_uuid).with_for_update()
        )
        if current != attempt:  # another engine already moved it on
            return 0
        if not service.fail(session, alert_uuid, attempt, f"Could not resume the investigation: {reason}"):
            return 0
        if attempt >= max_auto_retries:
            return 0
        next_attempt = service.resubmit(
            session, alert_uuid, actor=RECOVERY_ACTOR, reason="Fresh attempt: the previous one could not be resumed"
        )
    _enqueue_committed(queue, alert_uuid, next_attempt)
    return 0 if next_attempt is None else 1


def rerun_after_transient_failure(queue: Enqueuer, alert_uuid: uuid.UUID, resubmit: Callable[[], int | None]) -> None:
    """The automatic re-run, from inside the failed attempt's workflow: `resubmit` is the recorded step that
    commits Failed → Submitted (None when the alert was no longer Failed)."""
    _enqueue_committed(queue, alert_uuid, resubmit())


def submit_created(db: Database, queue: Enqueuer, stopping: Callable[[], bool]) -> int:
    """E1's second half: enqueue Created alerts that have a type, then mark them Submitted; returns how many.

    A batch at a time, until `stopping()` (a stop must not wait for a batch; the rest stay Created)."""
    total = 0
    while not stopping():
        with db.read() as session:
            rows = session.execute(
                select(Alert.alert_uuid, Alert.investigation_retry_count)
                .where(Alert.investigation_status == InvestigationStatus.CREATED, Alert.alert_type.is_not(None))
                .order_by(Alert.id)
                .limit(SUBMIT_BATCH)
            ).all()
        if not rows:
            return total
        enqueued = []
        for alert_uuid, attempt in rows:
            if stopping():
                break
            queue.enqueue(alert_uuid, attempt)  # before the commit, unlike the others: see the module docstring
            enqueued.append(alert_uuid)
        with db.write() as session:
            alerts.transition_many(
                session,
                enqueued,
                from_status=InvestigationStatus.CREATED,
                to=InvestigationStatus.SUBMITTED,
                actor=ENGINE_ACTOR,
                message=QUEUED_MESSAGE,
            )
        total += len(enqueued)
    return total


def _enqueue_committed(queue: Enqueuer | None, alert_uuid: uuid.UUID, attempt: int | None) -> None:
    """Called only once the transaction that made `attempt` Submitted has committed; None: nothing was."""
    if queue is not None and attempt is not None:
        queue.enqueue(alert_uuid, attempt)


def ask_checkpoint(
    db: Database, runner: StepRunner, plan: InvestigationPlan, position: int, step: CheckpointStep
) -> CheckpointAsk:
    """The recorded step `vigil.ask_checkpoint`: open the row `asking`, send the question, record it asked (or
    failed); a replay that finds the question sent or failed sends nothing."""
    with db.write() as session:
        opened = runner.open_question(session, plan, position, step)
    if not isinstance(opened, OpenedQuestion):
        return opened
    try:
        sent = runner.send_question(opened)
    except QuestionNotSent as failure:
        with db.write() as session:
            checkpoints.mark_failed(session, opened.checkpoint_uuid, failure.reason)
        return opened.not_sent(failure)
    with db.write() as session:
        checkpoints.mark_asked(session, opened.checkpoint_uuid, sent, opened.waiting.timeout_seconds)
        return opened.asked(checkpoints.evidence(checkpoints.get(session, opened.checkpoint_uuid)))


def wait_for_answer(ask: Callable[[], CheckpointAsk], start_waiting: Callable[[CheckpointAsk], None]) -> CheckpointAsk:
    """From the investigation's workflow: `ask` is the recorded step above; when its question waits for an answer,
    the rest of the playbook moves to the waiting workflow (`start_waiting`, idempotent by its derived id)."""
    asked = ask()
    if asked.waiting:
        start_waiting(asked)
    return asked


def receive_chat_delivery(db: Database, waker: Waker | None, record: RecordDelivery) -> ChatDelivery:
    """A verified chat delivery: `record` stores it (once) and reads its answers, each answers its checkpoint in the
    same transaction, and the waiting workflows are woken after the commit (see the module docstring)."""
    with db.write() as session:
        delivery = record(session)
        wakes = [checkpoints.on_answer(session, answer) for answer in delivery.answers]
    for wake in wakes:
        _wake_committed(waker, wake)
    return delivery


def _wake_committed(waker: Waker | None, wake: Wake | None) -> None:
    """Called only once the answer is committed; a failure is logged, the workflow's next poll finds the answer."""
    if wake is None:
        return
    if waker is None:
        logger.warning("no workflow waker installed; checkpoint %s is picked up by its next poll", wake.checkpoint_uuid)
        return
    try:
        waker.send(wake.workflow_id, wake.checkpoint_uuid)
    except Exception:
        logger.exception(
            "could not wake the workflow of checkpoint %s (its answer is recorded and will be picked up)",
            wake.checkpoint_uuid,
        )
