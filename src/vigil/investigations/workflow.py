"""The durable investigation: one DBOS workflow per attempt, each stage a recorded step.

If a worker dies mid-investigation, DBOS replays the workflow elsewhere: finished steps return
their recorded results, and the interrupted step runs again (its evidence row is an upsert).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbos import DBOS, SetWorkflowID
from dbos import error as dbos_errors
from pydantic import BaseModel, TypeAdapter
from sqlalchemy.orm import Session

from vigil.ai.factory import Investigators, UnavailableModel
from vigil.ai.investigator import AiCalls, Drafted, Investigator
from vigil.ai.llm.config import ModelChoice
from vigil.ai.schemas import Analysis, AvailableSkill, EvidenceStatus
from vigil.ai.transcript import Exchange
from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.errors import VigilError
from vigil.integrations.catalog import VIGIL_INTEGRATION_ID, all_skills, chat_integration_ids
from vigil.investigations import checkpoints, flows, service
from vigil.investigations.checkpoints import CHECKPOINT_TOPIC
from vigil.investigations.schemas import CheckpointAsk, InvestigationPlan, Progress, StepRecord
from vigil.investigations.steps import INTERNAL_SKILL_PURPOSES, NO_INPUTS, StepRunner, as_checkpoint
from vigil.playbooks.schemas import AnalyzeStep, PlaybookDefinition

logger = logging.getLogger("vigil.engine")
QUEUE_NAME = "investigations"
# A checkpoint's wait is cut into slices of at most this long; each slice re-reads the row. It also bounds how
# long a stopping engine waits for its waiting workflows to notice (a DBOS recv cannot be interrupted).
CHECKPOINT_SLICE_SECONDS = 15.0
#: Looking up, then storing, the playbook races only with its deletion; two rounds settle it.
PLAN_ATTEMPTS = 2


@dataclass
class EngineRuntime:
    """What workflow code needs, installed by the engine when it starts in this process."""

    db: Database
    investigators: Investigators
    #: The organization's model (its override, else the service's); reads the database, never writes.
    model_choice: Callable[[Session, uuid.UUID], ModelChoice]
    steps: StepRunner
    max_auto_retries: int
    retry_backoff_seconds: float


_runtime: EngineRuntime | None = None


def install_runtime(runtime: EngineRuntime | None) -> None:
    global _runtime  # noqa: PLW0603 - DBOS workflow functions are module-level; this is their context
    _runtime = runtime


class EngineStopped(RuntimeError):
    """The engine stopped under a running workflow (a graceful shutdown): not the investigation's failure.

    The workflow stays pending in DBOS and resumes from its last finished step on the next start.
    """


def runtime() -> EngineRuntime:
    if _runtime is None:
        raise EngineStopped("the investigation engine is not running in this process")
    return _runtime


class InvestigationFailed(Exception):
    """Ends an attempt as Failed; `transient` decides whether an automatic re-run is worth it."""

    def __init__(self, reason: str, transient: bool) -> None:
        super().__init__(reason, transient)
        self.reason = reason
        self.transient = transient


@DBOS.workflow(name="vigil.investigate")
def investigate(alert_uuid_text: str, attempt: int) -> str | None:
    def body() -> str | None:
        begun = service.Begun.model_validate_json(_begin(alert_uuid_text, attempt))
        if not begun.started:
            logger.info("attempt %s of %s is stale; nothing to do", attempt, alert_uuid_text)
            return None
        plan_json = begun.plan.model_dump_json() if begun.plan else _plan(alert_uuid_text, attempt, begun.context)
        return _run_from(plan_json, 0, Progress())

    return _guarded(alert_uuid_text, attempt, body)


@DBOS.workflow(name="vigil.await_checkpoint")
def await_checkpoint(plan_json: str, position: int, progress_json: str, ask_json: str) -> str | None:
    """The rest of an investigation after a chat question: wait for the answer (or the timeout), then go on.

    A separate workflow (not on the queue) so a person's think time never holds one of the queue's slots.
    It waits in slices and re-reads the checkpoint between them, so even a lost wake-up only costs a slice.
    """
    plan = InvestigationPlan.model_validate_json(plan_json)
    ask = CheckpointAsk.model_validate_json(ask_json)
    assert ask.checkpoint_uuid is not None

    def body() -> str | None:
        checkpoint = str(ask.checkpoint_uuid)
        remaining = float(ask.timeout_seconds)
        with WAITING_AT_CHECKPOINTS:
            waiting = _checkpoint_waiting(checkpoint)
            while waiting and remaining > 0:
                wait = min(remaining, CHECKPOINT_SLICE_SECONDS)
                woken = DBOS.recv(topic=CHECKPOINT_TOPIC, timeout_seconds=wait) is not None
                remaining -= wait
                waiting = not woken and _checkpoint_waiting(checkpoint)
                if not woken and not waiting:
                    logger.warning("checkpoint %s was answered but its wake-up did not arrive", checkpoint)
        record = StepRecord.model_validate_json(
            _conclude_checkpoint(plan_json, ask.record.model_dump_json(), checkpoint)
        )
        progress = Progress.model_validate_json(progress_json)
        progress.records.append(record)
        return _run_from(plan_json, position + 1, progress)

    return _guarded(str(plan.alert_uuid), plan.attempt, body)


class _WaitingCount:
    """How many workflows of this process are waiting at a checkpoint, so a stopping engine can let them end."""

    def __init__(self) -> None:
        self._count = 0
        self._changed = threading.Condition()

    def __enter__(self) -> None:
        with self._changed:
            self._count += 1

    def __exit__(self, *_exc: object) -> None:
        with self._changed:
            self._count -= 1
            self._changed.notify_all()

    def wait_until_none(self, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._count == 0, timeout)


WAITING_AT_CHECKPOINTS = _WaitingCount()


def _guarded(alert_uuid_text: str, attempt: int, body: Callable[[], str | None]) -> str | None:
    """Every way an attempt can end badly ends it visibly as Failed (and maybe re-run), never stranded."""
    alert_uuid = uuid.UUID(alert_uuid_text)
    try:
        return body()
    except InvestigationFailed as failure:
        _fail_and_maybe_retry(alert_uuid, attempt, failure.reason, failure.transient)
        return None
    except service.AlertGone:
        logger.warning("alert %s disappeared during its investigation", alert_uuid_text)
        return None
    except (dbos_errors.DBOSException, EngineStopped):
        # The engine is shutting down under this workflow (e.g. while it waits at a checkpoint or between two
        # steps): it is not failed, DBOS resumes it on the next start or on another worker.
        raise
    except Exception as error:
        # Anything unforeseen (e.g. the database failing inside a step) must end the attempt
        # visibly as Failed, never leave the alert InProgress behind a dead workflow.
        logger.exception("investigation of %s attempt %s crashed", alert_uuid_text, attempt)
        _fail_and_maybe_retry(alert_uuid, attempt, f"Internal error: {type(error).__name__}: {error}", True)
        return None


def _run_from(plan_json: str, start: int, progress: Progress) -> str | None:
    """Run the playbook from step `start`; at a chat checkpoint hand the rest to `await_checkpoint`."""
    plan = InvestigationPlan.model_validate_json(plan_json)
    steps = plan.definition.steps
    for position in range(start, len(steps)):
        step = steps[position]
        if isinstance(step, AnalyzeStep):
            verdict = _verdict(plan_json, _dump(progress.records))
            if position == len(steps) - 1:  # the usual place: record the verdict and complete in one step
                return _finish(plan_json, verdict, position)
            progress.analysis = Analysis.model_validate_json(_record_analysis(plan_json, verdict, position))
            continue
        if as_checkpoint(step) is not None:
            ask = flows.wait_for_answer(
                functools.partial(_asked, plan_json, position),
                functools.partial(_start_waiting, plan_json, position, progress),
            )
            if ask.waiting:
                return None
            progress.records.append(ask.record)
            continue
        record = StepRecord.model_validate_json(_run_step(plan_json, position))
        progress.records.append(record)
        if record.status is EvidenceStatus.ERROR and record.fatal:
            raise InvestigationFailed(f"Step {step.name!r} failed: {record.error}", record.transient)
    if progress.analysis is None:
        return _finish(plan_json, _verdict(plan_json, _dump(progress.records)), len(steps))
    return _complete(plan_json, progress.analysis.model_dump_json())


def _asked(plan_json: str, position: int) -> CheckpointAsk:
    return CheckpointAsk.model_validate_json(_ask_checkpoint(plan_json, position))


def _start_waiting(plan_json: str, position: int, progress: Progress, asked: CheckpointAsk) -> None:
    assert asked.waiting_workflow_id is not None
    with SetWorkflowID(asked.waiting_workflow_id):
        DBOS.start_workflow(await_checkpoint, plan_json, position, progress.model_dump_json(), asked.model_dump_json())


_RECORDS = TypeAdapter(list[StepRecord])


def _dump(records: list[StepRecord]) -> str:
    return _RECORDS.dump_json(records).decode()


@DBOS.step(name="vigil.begin")
def _begin(alert_uuid_text: str, attempt: int) -> str:
    """Start the attempt and, when the type has a playbook, pin it: one step and one commit (`service.begin`)."""
    with runtime().db.write() as session:
        return service.begin(session, uuid.UUID(alert_uuid_text), attempt).model_dump_json()


def _plan(alert_uuid_text: str, attempt: int, first: service.PrepareContext | None) -> str:
    """Draft this alert type's first playbook (outside any write transaction: a model may think for a minute)
    and store it; concurrent first alerts of a type still end with exactly one playbook. `first` is what
    `_begin` loaded; a second round (the playbook was deleted meanwhile) loads again."""
    calls = AiCalls(durable=_WorkflowCalls(alert_uuid_text, attempt))
    for _ in range(PLAN_ATTEMPTS):
        context = first or service.PrepareContext.model_validate_json(_load(alert_uuid_text))
        first = None
        drafted = None if context.has_playbook else _draft(context, calls)
        plan_json = _prepare(
            alert_uuid_text,
            attempt,
            context.model_dump_json(),
            drafted.definition.model_dump_json() if drafted else None,
            drafted.note if drafted else "",
        )
        if plan_json is not None:
            return plan_json
    raise InvestigationFailed("The alert type's playbook was deleted while it was being prepared", transient=True)


@DBOS.step(name="vigil.load")
def _load(alert_uuid_text: str) -> str:
    with runtime().db.read() as session:
        return service.load_for_prepare(session, uuid.UUID(alert_uuid_text)).model_dump_json()


class _SkillsAvailable(BaseModel):
    skills: list[AvailableSkill]
    chat_ready: bool


@DBOS.step(name="vigil.skills_available")
def _skills_available(organization_uuid_text: str) -> str:
    """The organization's connected skills (plus Vigil's own), recorded so a replay plans with the same ones."""
    rt = runtime()
    organization_uuid = uuid.UUID(organization_uuid_text)
    with rt.db.read() as session:
        connected = rt.steps.resolver.connected_integrations(session, organization_uuid)
        authenticated = rt.steps.resolver.authenticated_integrations(session, organization_uuid)
        chat_ready = bool(chat_integration_ids() & authenticated)
    skills = [
        AvailableSkill(
            skill_id=s.id,
            integration_id=s.integration_id,
            writes=s.writes,
            purpose=s.purpose,
            input_schema=_input_schema(s.input_model),
        )
        for s in all_skills()
        if s.integration_id in connected
    ] + [
        AvailableSkill(skill_id=name, integration_id=VIGIL_INTEGRATION_ID, purpose=purpose, input_schema=NO_INPUTS)
        for name, purpose in INTERNAL_SKILL_PURPOSES.items()
    ]
    return _SkillsAvailable(skills=skills, chat_ready=chat_ready).model_dump_json()


@functools.cache
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


def _investigator(organization_uuid: uuid.UUID) -> Investigator:
    """The organization's investigator; when its model cannot even be chosen (e.g. its stored key no longer
    decrypts), the built-in analyst, which records why."""
    rt = runtime()
    try:
        with rt.db.read() as session:
            choice = rt.model_choice(session, organization_uuid)
    except VigilError as error:
        logger.warning("organization %s: its AI model cannot be used (%s)", organization_uuid, error.code)
        return UnavailableModel("", str(error))
    return rt.investigators.for_choice(choice)


def _draft(context: service.PrepareContext, calls: AiCalls) -> Drafted:
    available = _SkillsAvailable.model_validate_json(_skills_available(str(context.organization_uuid)))
    return _investigator(context.organization_uuid).draft_playbook(
        context.facts, context.entities, available.skills, available.chat_ready, calls
    )


@DBOS.step(name="vigil.prepare")
def _prepare(
    alert_uuid_text: str, attempt: int, context_json: str, definition_json: str | None, note: str
) -> str | None:
    rt = runtime()
    try:
        definition = PlaybookDefinition.model_validate_json(definition_json) if definition_json else None
        context = service.PrepareContext.model_validate_json(context_json)
        with rt.db.write() as session:
            plan = service.prepare(session, context, uuid.UUID(alert_uuid_text), attempt, definition, note)
    except ValueError as error:  # pydantic validation of a drafted or stored playbook
        raise _permanent(f"Invalid playbook: {error}") from error
    return plan.model_dump_json() if plan is not None else None


class _WorkflowCalls:
    """Each AI call is one DBOS step that also stores its audit row; numbered in call order, which a replay
    repeats, so a re-executed call overwrites its own row."""

    def __init__(self, alert_uuid_text: str, attempt: int) -> None:
        self._alert, self._attempt, self._seq = alert_uuid_text, attempt, 0

    def once(self, call: Callable[[], Exchange]) -> Exchange:
        self._seq += 1
        return Exchange.model_validate_json(_ai_call(self._alert, self._attempt, self._seq, call))

    def clock(self) -> float:
        return _clock()


@DBOS.step(name="vigil.ai_call")
def _ai_call(alert_uuid_text: str, attempt: int, seq: int, call: Callable[[], Exchange]) -> str:
    exchange = call()
    alert_uuid = uuid.UUID(alert_uuid_text)
    with runtime().db.write() as session:
        organization_uuid = service.organization_of(session, alert_uuid)
        service.record_exchange(session, alert_uuid, attempt, seq, organization_uuid, exchange)
    return exchange.model_dump_json()


@DBOS.step(name="vigil.clock")
def _clock() -> float:
    return time.time()


class _FollowUps:
    """The model's follow-up questions, answered by running the skill through the step runner."""

    def __init__(self, plan: InvestigationPlan) -> None:
        self._plan = plan

    def call(self, skill_id: str, inputs: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
        record = runtime().steps.run_follow_up(self._plan, skill_id, inputs)
        return record.output, record.error


@DBOS.step(name="vigil.run_step")
def _run_step(plan_json: str, position: int) -> str:
    rt = runtime()
    plan = InvestigationPlan.model_validate_json(plan_json)
    record = rt.steps.run(plan, position, plan.definition.steps[position])
    with rt.db.write() as session:
        service.record_step(session, plan.alert_uuid, plan.attempt, record)
    return record.model_dump_json()


@DBOS.step(name="vigil.ask_checkpoint")
def _ask_checkpoint(plan_json: str, position: int) -> str:
    rt = runtime()
    plan = InvestigationPlan.model_validate_json(plan_json)
    checkpoint = as_checkpoint(plan.definition.steps[position])
    assert checkpoint is not None
    ask = flows.ask_checkpoint(rt.db, rt.steps, plan, position, checkpoint)
    with rt.db.write() as session:
        service.record_step(session, plan.alert_uuid, plan.attempt, ask.record)
    return ask.model_dump_json()


@DBOS.step(name="vigil.checkpoint_waiting")
def _checkpoint_waiting(checkpoint_uuid_text: str) -> bool:
    with runtime().db.read() as session:
        return checkpoints.is_waiting(session, uuid.UUID(checkpoint_uuid_text))


@DBOS.step(name="vigil.conclude_checkpoint")
def _conclude_checkpoint(plan_json: str, asked_json: str, checkpoint_uuid_text: str) -> str:
    rt = runtime()
    plan = InvestigationPlan.model_validate_json(plan_json)
    record = rt.steps.conclude_checkpoint(
        plan, StepRecord.model_validate_json(asked_json), uuid.UUID(checkpoint_uuid_text)
    )
    with rt.db.write() as session:
        service.record_step(session, plan.alert_uuid, plan.attempt, record)
    return record.model_dump_json()


def _verdict(plan_json: str, records_json: str) -> str:
    """The verdict, reached at workflow level so each model request and follow-up skill is its own step."""
    plan = InvestigationPlan.model_validate_json(plan_json)
    organization_uuid = plan.organization_uuid or uuid.UUID(_organization_of(str(plan.alert_uuid)))
    facts = StepRecord.model_validate_json(_organization_facts(plan_json))
    evidence = service.as_evidence([facts, *_RECORDS.validate_json(records_json)])
    investigator = _investigator(organization_uuid)
    calls = AiCalls(durable=_WorkflowCalls(str(plan.alert_uuid), plan.attempt))
    if investigator.takes_tools:
        available = _SkillsAvailable.model_validate_json(_skills_available(str(organization_uuid)))
        calls = AiCalls(
            durable=calls.durable,
            tools=_FollowUps(plan),
            tool_skills=[skill for skill in available.skills if not skill.writes],
        )
    return investigator.analyze(plan.facts, plan.entities, evidence, calls).model_dump_json()


@DBOS.step(name="vigil.organization_facts")
def _organization_facts(plan_json: str) -> str:
    """The organization's active facts as they are now, recorded (and replayed) as the analysis's first evidence."""
    rt = runtime()
    plan = InvestigationPlan.model_validate_json(plan_json)
    record = rt.steps.run_organization_facts(plan)
    with rt.db.write() as session:
        service.record_step(session, plan.alert_uuid, plan.attempt, record)
    return record.model_dump_json()


@DBOS.step(name="vigil.organization_of")
def _organization_of(alert_uuid_text: str) -> str:
    with runtime().db.read() as session:
        return str(service.organization_of(session, uuid.UUID(alert_uuid_text)))


@DBOS.step(name="vigil.analyze")
def _record_analysis(plan_json: str, analysis_json: str, position: int) -> str:
    """Record a verdict reached before the playbook's last step (the steps after it still run)."""
    plan = InvestigationPlan.model_validate_json(plan_json)
    with runtime().db.write() as session:
        service.record_step(session, plan.alert_uuid, plan.attempt, _analysis_record(analysis_json, position))
    return analysis_json


@DBOS.step(name="vigil.complete")
def _complete(plan_json: str, analysis_json: str) -> str | None:
    plan = InvestigationPlan.model_validate_json(plan_json)
    with runtime().db.write() as session:
        return service.complete(session, plan, Analysis.model_validate_json(analysis_json))


@DBOS.step(name="vigil.finish")
def _finish(plan_json: str, analysis_json: str, position: int) -> str | None:
    """Record the closing verdict and complete (case, Completed) in one transaction: one step, one commit."""
    plan = InvestigationPlan.model_validate_json(plan_json)
    with runtime().db.write() as session:
        service.record_step(session, plan.alert_uuid, plan.attempt, _analysis_record(analysis_json, position))
        return service.complete(session, plan, Analysis.model_validate_json(analysis_json))


def _analysis_record(analysis_json: str, position: int) -> StepRecord:
    return StepRecord(
        position=position,
        name="AI analysis",
        kind="analyze",
        status=EvidenceStatus.OK,
        output=Analysis.model_validate_json(analysis_json).model_dump(mode="json"),
        started_at=epoch_now(),
    )


# Recording the failure must outlast a short database outage, so DBOS retries this step.
@DBOS.step(name="vigil.fail", retries_allowed=True, max_attempts=8, interval_seconds=1.0, backoff_rate=2.0)
def _fail(alert_uuid_text: str, attempt: int, reason: str) -> bool:
    with runtime().db.write() as session:
        return service.fail(session, uuid.UUID(alert_uuid_text), attempt, reason)


@DBOS.step(name="vigil.resubmit")
def _resubmit(alert_uuid_text: str, reason: str) -> int | None:
    with runtime().db.write() as session:
        return service.resubmit(session, uuid.UUID(alert_uuid_text), actor="vigil:auto-retry", reason=reason)


def _fail_and_maybe_retry(alert_uuid: uuid.UUID, attempt: int, reason: str, transient: bool) -> None:
    rt = runtime()
    if not _fail(str(alert_uuid), attempt, reason):
        return
    if not transient or attempt >= rt.max_auto_retries:
        return
    DBOS.sleep(rt.retry_backoff_seconds * (2**attempt))
    flows.rerun_after_transient_failure(
        QUEUE_NOW,
        alert_uuid,
        lambda: _resubmit(str(alert_uuid), f"Automatic re-run after a transient failure: {reason}"),
    )


class _QueueNow:
    """Enqueues on the calling thread: engine threads and workflows (a request hands over to `Engine.enqueue`)."""

    def enqueue(self, alert_uuid: uuid.UUID, attempt: int) -> None:
        """Idempotent: the workflow id is derived from the alert and attempt, so a second enqueue is a no-op."""
        with SetWorkflowID(service.workflow_id_for(alert_uuid, attempt)):
            DBOS.enqueue_workflow(QUEUE_NAME, investigate, str(alert_uuid), attempt)


QUEUE_NOW: flows.Enqueuer = _QueueNow()


def _permanent(reason: str) -> InvestigationFailed:
    return InvestigationFailed(reason, transient=False)
