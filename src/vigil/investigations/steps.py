"""Executing one playbook step: render inputs, pick the connection, run the skill, record what happened."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict
from sqlalchemy.orm import Session

from vigil.ai.schemas import EvidenceStatus
from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.evidence.facts import ORG_FACTS_SKILL_ID
from vigil.facts.service import analysis_evidence
from vigil.input_types import MAX_CHECKPOINT_TIMEOUT_SECONDS, MIN_CHECKPOINT_TIMEOUT_SECONDS
from vigil.integrations.bridge import AsyncBridge
from vigil.integrations.catalog import (
    RELATED_SKILL_ID,
    all_skills,
    canonical_skill_id,
    chat_provider,
    get_integration,
    get_skill,
    skill_name,
)
from vigil.integrations.chat import (
    CHAT_CHECKPOINT_SKILL_ID,
    ChatCheckpointStepInput,
    ChatProvider,
    ChatQuestion,
    SentQuestion,
    ask,
    decode_message_ref,
)
from vigil.integrations.errors import IntegrationError, UnknownSkillError
from vigil.integrations.framework import SkillContext
from vigil.integrations.runner import run_skill, run_vendor_call
from vigil.investigations import checkpoints
from vigil.investigations.checkpoints import CheckpointStatus
from vigil.investigations.related import related_alerts
from vigil.investigations.schemas import CheckpointAsk, InvestigationPlan, StepRecord
from vigil.investigations.service import organization_of
from vigil.investigations.templates import TemplateRenderError, render_inputs
from vigil.playbooks.schemas import (
    CheckpointStep,
    OnError,
    PlaybookStep,
    SkillStep,
)

logger = logging.getLogger("vigil.engine")


class ConnectionResolver(Protocol):
    """Finds the organization's connection for a skill (the integrations domain implements this)."""

    def connected_integrations(self, session: Session, organization_uuid: uuid.UUID) -> set[str]: ...

    def authenticated_integrations(self, session: Session, organization_uuid: uuid.UUID) -> set[str]: ...

    def chat_integration(self, session: Session, organization_uuid: uuid.UUID) -> str | None: ...

    def skill_context(
        self, session: Session, organization_uuid: uuid.UUID, integration_id: str, connection_name: str | None
    ) -> SkillContext | None: ...

    def connection_name(self, session: Session, connection_uuid: uuid.UUID) -> str: ...


def alert_summary(plan: InvestigationPlan) -> str:
    """One line about the alert under the checkpoint question, so the person knows what it is about."""
    facts = plan.facts
    return f"Alert {facts.alert_id} · {facts.alert_type} · source {facts.alert_provider}"


def as_checkpoint(step: PlaybookStep) -> CheckpointStep | None:
    """A checkpoint step, or a skill step naming the Chat Checkpoint skill (the same thing, written as a skill)."""
    if isinstance(step, CheckpointStep):
        return step
    if isinstance(step, SkillStep) and step.skill == CHAT_CHECKPOINT_SKILL_ID:
        return CheckpointStep(
            name=step.name,
            user_email=step.inputs.get("user_email", ""),
            question=step.inputs.get("question", "") or "Was this you?",
            timeout_seconds=_timeout(step.inputs.get("timeout_seconds", "")),
        )
    return None


def _explain(error: IntegrationError) -> str:
    """The vendor's failure as an analyst reads it: cause and remedy when known, else the raw message."""
    if error.cause and error.remedy:
        return f"{error.cause} ({error.message}). {error.remedy}"
    return error.message


def _from_vendor(vendor: str, message: str) -> str:
    """A vendor skill's failure names the vendor: transport errors only know a host, timeouts only the skill."""
    return message if message.startswith(vendor) else f"{vendor}: {message}"


def _unreadable(vendor: str, skill_id: str, error: Exception) -> IntegrationError:
    """A vendor answer the skill could not parse (wrong JSON types, a model that does not validate): the vendor
    or whatever answers in its place is at fault, so the step fails with that said, not the whole investigation."""
    return IntegrationError(
        "unexpected_response",
        f"{vendor} answered {skill_id} with something Vigil could not read ({type(error).__name__})",
        cause="Unexpected response",
        remedy="Check the configured base URL points at the vendor's API.",
    )


def _timeout(text: str) -> int | None:
    """A skill step's `timeout_seconds` input: whole seconds (kept within the bounds), or blank/anything else for
    the default, exactly as a checkpoint step without its own timeout."""
    if not text.strip().isdigit():
        return None
    return min(MAX_CHECKPOINT_TIMEOUT_SECONDS, max(MIN_CHECKPOINT_TIMEOUT_SECONDS, int(text)))


InternalSkill = Callable[[Session, InvestigationPlan], dict[str, Any]]

#: Skills Vigil runs itself against its own data: no connection, always available.
INTERNAL_SKILLS: dict[str, InternalSkill] = {
    RELATED_SKILL_ID: lambda session, plan: related_alerts(session, plan.alert_uuid, plan.entities),
}


class NoInputs(BaseModel):
    """Vigil's own skills take their context from the alert, never from inputs."""

    model_config = ConfigDict(extra="forbid")


NO_INPUTS = NoInputs.model_json_schema()
#: The organization's facts are read by the engine before every analysis, not by a playbook step an edit could
#: drop; their record sits ahead of every playbook step (follow-ups, at -1, are never stored).
ORG_FACTS_POSITION = -2
ORG_FACTS_STEP = SkillStep(name="Organization facts", skill=ORG_FACTS_SKILL_ID)


def organization_facts(session: Session, plan: InvestigationPlan) -> dict[str, Any]:
    organization_uuid = plan.organization_uuid or organization_of(session, plan.alert_uuid)
    return analysis_evidence(session, organization_uuid, plan.entities)


#: What each of Vigil's own skills is for, as an AI investigator reads it in the catalog.
INTERNAL_SKILL_PURPOSES: dict[str, str] = {
    RELATED_SKILL_ID: "Other alerts of this organization that share this alert's subject users, hosts, "
    "addresses or hashes (Vigil's own data; no inputs)."
}


def playbook_skill_inputs() -> dict[str, type[BaseModel]]:
    """Every skill a playbook step may name, with the model its inputs are checked against (API and console)."""
    models: dict[str, type[BaseModel]] = dict.fromkeys(INTERNAL_SKILLS, NoInputs)
    models.update({declared.id: declared.input_model for declared in all_skills()})
    models[CHAT_CHECKPOINT_SKILL_ID] = ChatCheckpointStepInput  # the engine supplies the summary and the id
    return models


class QuestionNotSent(Exception):
    """The checkpoint's question did not (surely) reach the person: `reason` as an analyst reads it, `code` its
    stable name."""

    def __init__(self, reason: str, code: str) -> None:
        super().__init__(reason, code)
        self.reason = reason
        self.code = code


@dataclass(frozen=True)
class OpenedQuestion:
    """A checkpoint whose row is `asking`: what sending its question needs, and the step's outcome either way."""

    checkpoint_uuid: uuid.UUID
    provider: ChatProvider
    chat: str
    context: SkillContext
    email: str
    question: ChatQuestion
    waiting: CheckpointAsk

    def asked(self, evidence: dict[str, Any]) -> CheckpointAsk:
        """The wait, its record showing whom the question went to (and the answer, when it came first)."""
        return self.waiting.model_copy(update={"record": self.waiting.record.model_copy(update={"output": evidence})})

    def not_sent(self, failure: QuestionNotSent) -> CheckpointAsk:
        error = f"Could not ask {self.email} in {self.provider.name}: {failure.reason}"
        update = {"status": EvidenceStatus.ERROR, "error": error, "error_code": failure.code}
        return CheckpointAsk(record=self.waiting.record.model_copy(update=update))


@dataclass(frozen=True)
class StepPolicy:
    retry_attempts: int
    retry_backoff_seconds: float
    timeout_seconds: float
    fault_delay_seconds: float = 0.0


@dataclass
class StepRunner:
    db: Database
    bridge: AsyncBridge
    resolver: ConnectionResolver
    policy: StepPolicy

    def run(self, plan: InvestigationPlan, position: int, step: PlaybookStep) -> StepRecord:
        started, clock = epoch_now(), time.perf_counter()
        if self.policy.fault_delay_seconds:
            time.sleep(self.policy.fault_delay_seconds)
        record = self._run(plan, position, step, started)
        record.duration_ms = int((time.perf_counter() - clock) * 1000)
        return record

    def _run(self, plan: InvestigationPlan, position: int, step: PlaybookStep, started: int) -> StepRecord:
        base: dict[str, Any] = {"position": position, "name": step.name, "kind": step.kind, "started_at": started}
        if not isinstance(step, SkillStep):
            return StepRecord(**base, status=EvidenceStatus.OK)
        base["skill_id"] = step.skill
        try:
            inputs = render_inputs(step.inputs, plan.template_context())
        except TemplateRenderError as error:
            return self._failed(base, step, f"Template error in {error}", code="template_error", transient=False)
        base["inputs"] = inputs
        empty = sorted(name for name, value in inputs.items() if value == "")
        if empty:
            return StepRecord(
                **base,
                status=EvidenceStatus.SKIPPED,
                error=f"Skipped: the alert has no value for {', '.join(empty)}",
            )
        if step.skill in INTERNAL_SKILLS:
            return self._run_internal_skill(plan, step, base, INTERNAL_SKILLS[step.skill])
        return self._run_vendor_skill(plan, step, base, inputs)

    def run_organization_facts(self, plan: InvestigationPlan) -> StepRecord:
        """The organization's active facts, recorded as evidence before the analysis (a failure is one step)."""
        started, clock = epoch_now(), time.perf_counter()
        base: dict[str, Any] = {
            "position": ORG_FACTS_POSITION,
            "name": ORG_FACTS_STEP.name,
            "kind": "skill",
            "skill_id": ORG_FACTS_SKILL_ID,
            "started_at": started,
        }
        record = self._run_internal_skill(plan, ORG_FACTS_STEP, base, organization_facts)
        record.duration_ms = int((time.perf_counter() - clock) * 1000)
        return record

    def _run_internal_skill(
        self, plan: InvestigationPlan, step: SkillStep, base: dict[str, Any], skill: InternalSkill
    ) -> StepRecord:
        """A crashing internal skill is one failed step (its `on_error` decides), not a crashed investigation."""
        try:
            with self.db.read() as session:
                output = skill(session, plan)
        except Exception as error:
            logger.exception("internal skill %r failed", step.skill)
            return self._failed(
                base,
                step,
                f"{skill_name(step.skill)} failed: {type(error).__name__}",
                code="internal_error",
                transient=True,
            )
        return StepRecord(**base, status=EvidenceStatus.OK, output=output)

    def _run_vendor_skill(
        self, plan: InvestigationPlan, step: SkillStep, base: dict[str, Any], inputs: dict[str, str]
    ) -> StepRecord:
        try:
            skill = get_skill(step.skill)
        except UnknownSkillError:
            return self._failed(base, step, f"Unknown skill {step.skill!r}", code="unknown_skill", transient=False)
        with self.db.read() as session:
            organization_uuid = plan.organization_uuid or organization_of(session, plan.alert_uuid)
            try:
                context = self.resolver.skill_context(session, organization_uuid, skill.integration_id, step.connection)
            except IntegrationError as error:
                return StepRecord(**base, status=EvidenceStatus.SKIPPED, error=_explain(error))
        if context is None:
            return StepRecord(
                **base,
                status=EvidenceStatus.SKIPPED,
                error=f"Skipped: the organization has no {skill.integration_id} connection",
            )
        base["connection_name"] = step.connection or context.connection_key
        vendor = get_integration(skill.integration_id).name
        timeout = self.policy.timeout_seconds
        last_error: IntegrationError | None = None
        for attempt in range(self.policy.retry_attempts):
            try:
                output = self.bridge.run(run_skill(step.skill, context, inputs), timeout)
                return StepRecord(**base, status=EvidenceStatus.OK, output=output)
            except TimeoutError:
                message = f"{vendor} did not finish {skill.name} within {timeout:g} s"
                last_error = IntegrationError(code="skill_timeout", message=message, transient=True)
            except IntegrationError as error:
                last_error = error
                if not error.transient:
                    break
            except Exception as error:
                logger.warning("skill %r could not read its vendor's answer: %s", step.skill, type(error).__name__)
                last_error = _unreadable(vendor, skill.name, error)
                break
            if skill.writes:
                # A write may have reached the vendor before the failure; sending it again could
                # isolate twice or add a duplicate rule. The HTTP layer already retried what was safe.
                break
            if attempt + 1 < self.policy.retry_attempts:
                time.sleep(self.policy.retry_backoff_seconds * (2**attempt))
        assert last_error is not None
        message = _from_vendor(vendor, _explain(last_error))
        return self._failed(base, step, message, code=last_error.code, transient=last_error.transient)

    def run_follow_up(self, plan: InvestigationPlan, skill_id: str, inputs: dict[str, str]) -> StepRecord:
        """A read-only skill the AI asked for mid-analysis; its inputs are literal values, never templates."""
        started, clock = epoch_now(), time.perf_counter()
        skill_id = canonical_skill_id(skill_id)
        step = SkillStep(name=f"Follow-up: {skill_name(skill_id)}", skill=skill_id)
        base: dict[str, Any] = {
            "position": -1,
            "name": step.name,
            "kind": "skill",
            "skill_id": skill_id,
            "inputs": inputs,
            "started_at": started,
        }
        if skill_id in INTERNAL_SKILLS:
            record = self._run_internal_skill(plan, step, base, INTERNAL_SKILLS[skill_id])
        else:
            try:
                writes = get_skill(skill_id).writes
            except UnknownSkillError:
                return self._failed(base, step, f"Unknown skill {skill_id!r}", code="unknown_skill", transient=False)
            if writes:
                refusal = f"Refused: {skill_name(skill_id)} changes systems; only a person may run it"
                return self._failed(base, step, refusal, code="write_refused", transient=False)
            record = self._run_vendor_skill(plan, step, base, inputs)
        record.duration_ms = int((time.perf_counter() - clock) * 1000)
        return record

    # -- chat checkpoints: asking is sequenced by `flows.ask_checkpoint`, which owns the commits ----------------

    def open_question(
        self, session: Session, plan: InvestigationPlan, position: int, step: CheckpointStep
    ) -> OpenedQuestion | CheckpointAsk:
        """The step's checkpoint row, opened `asking` once (a replay gets it back), with what sending its question
        needs; or the step's outcome when there is nothing to send: why not (a final record), or the wait of a
        question already sent (never ask twice)."""
        base: dict[str, Any] = {
            "position": position,
            "name": step.name,
            "kind": "checkpoint",
            "skill_id": CHAT_CHECKPOINT_SKILL_ID,
            "started_at": epoch_now(),
        }

        def final(status: EvidenceStatus, error: str, code: str | None = None) -> CheckpointAsk:
            return CheckpointAsk(record=StepRecord(**base, status=status, error=error, error_code=code))

        try:
            rendered = render_inputs(
                {"user_email": step.user_email, "question": step.question}, plan.template_context()
            )
        except TemplateRenderError as error:
            return final(EvidenceStatus.ERROR, f"Template error in {error}", "template_error")
        email, question = rendered["user_email"].strip(), rendered["question"].strip()
        base["inputs"] = {"user_email": email, "question": question, "timeout_seconds": step.timeout_seconds}
        if not email or not question:
            return final(EvidenceStatus.SKIPPED, "Skipped: the alert names no user email to ask")
        organization_uuid = organization_of(session, plan.alert_uuid)
        # Resolved when asked (step > organization > console > environment) and kept on the row and in
        # the step's inputs, so a replay or a later settings change never moves this wait's end.
        timeout = checkpoints.resolve_timeout(
            session, organization_uuid, step.timeout_seconds, self.db.settings.checkpoint_timeout_seconds
        )
        base["inputs"] |= {"timeout_seconds": timeout.seconds, "timeout_source": timeout.source.value}
        chat = self.resolver.chat_integration(session, organization_uuid)
        try:
            context = None if chat is None else self.resolver.skill_context(session, organization_uuid, chat, None)
        except IntegrationError as error:
            return final(EvidenceStatus.SKIPPED, error.message)
        if chat is None or context is None:
            return final(EvidenceStatus.SKIPPED, "Skipped: the organization has no chat connection")
        row = checkpoints.open_checkpoint(
            session,
            alert_uuid=plan.alert_uuid,
            attempt=plan.attempt,
            position=position,
            organization_uuid=organization_uuid,
            connection_uuid=uuid.UUID(context.connection_key),
            connection_name=self.resolver.connection_name(session, uuid.UUID(context.connection_key)),
            provider_id=chat,
            email=email,
            question=question,
            timeout=timeout,
        )
        timeout = checkpoints.recorded_timeout(row, timeout)
        base["inputs"] |= {"timeout_seconds": timeout.seconds, "timeout_source": timeout.source.value}
        base["connection_name"] = row.connection_name
        waiting = CheckpointAsk(
            record=StepRecord(**base, status=EvidenceStatus.WAITING),
            checkpoint_uuid=row.checkpoint_uuid,
            waiting_workflow_id=row.waiting_workflow_id,
            timeout_seconds=timeout.seconds,
        )
        provider = chat_provider(row.provider_id)
        if row.status == CheckpointStatus.FAILED:
            return final(
                EvidenceStatus.ERROR, f"The question could not be sent to {provider.name}", "question_not_sent"
            )
        if row.status != CheckpointStatus.ASKING:  # replayed after the question went out: never ask twice
            waiting.record.output = checkpoints.evidence(row)
            return waiting
        return OpenedQuestion(
            row.checkpoint_uuid,
            provider,
            row.provider_id,
            context,
            email,
            ChatQuestion(row.checkpoint_uuid, question, alert_summary(plan)),
            waiting,
        )

    def send_question(self, opened: OpenedQuestion) -> SentQuestion:
        """One try: a question that may have reached the person is not sent again (the HTTP layer already retried
        what was safe to retry). Whatever goes wrong is a `QuestionNotSent`, so the row never stays `asking`."""
        provider, context = opened.provider, opened.context
        try:
            sent = self.bridge.run(
                run_vendor_call(opened.chat, context, lambda: ask(provider, context, opened.email, opened.question)),
                self.policy.timeout_seconds,
            )
        except Exception as error:
            if isinstance(error, TimeoutError):
                raise QuestionNotSent(f"{provider.name} did not answer in time", "skill_timeout") from error
            failure = (
                error if isinstance(error, IntegrationError) else _unreadable(provider.name, "the question", error)
            )
            raise QuestionNotSent(_explain(failure), failure.code) from error
        return SentQuestion.model_validate(sent)

    def conclude_checkpoint(self, plan: InvestigationPlan, asked: StepRecord, checkpoint_uuid: uuid.UUID) -> StepRecord:
        """The answer (or `timeout`) becomes the step's evidence; the chat message is rewritten to show it."""
        with self.db.write() as session:
            row = checkpoints.conclude(session, checkpoint_uuid)
            output = checkpoints.evidence(row)
            organization_uuid, connection_name, chat = row.organization_uuid, row.connection_name, row.provider_id
            message_ref = decode_message_ref(row.message_ref)
            try:
                context = self.resolver.skill_context(session, organization_uuid, chat, connection_name)
            except IntegrationError:
                context = None
        output["message_updated"] = False
        if context is not None and message_ref:
            try:
                self.bridge.run(
                    chat_provider(chat).show_outcome(
                        context, message_ref, output["question"], output["answer"], output["answered_at"]
                    ),
                    self.policy.timeout_seconds,
                )
                output["message_updated"] = True
            except (IntegrationError, TimeoutError):
                logger.warning("could not update the chat message of checkpoint %s", checkpoint_uuid)
        return asked.model_copy(
            update={
                "status": EvidenceStatus.OK,
                "output": output,
                "duration_ms": max(0, (epoch_now() - asked.started_at) * 1000),
            }
        )

    @staticmethod
    def _failed(base: dict[str, Any], step: SkillStep, message: str, *, code: str, transient: bool) -> StepRecord:
        """`code` is the failure's stable name (the vendor error's code, or Vigil's own), for metrics by cause."""
        return StepRecord(
            **base,
            status=EvidenceStatus.ERROR,
            error=message,
            error_code=code,
            fatal=step.on_error is OnError.FAIL,
            transient=transient,
        )
