"""Executing one playbook step: render inputs, pick the connection, run the skill, record what happened."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy.orm import Session

from vigil.ai.schemas import EvidenceStatus
from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.integrations.bridge import AsyncBridge
from vigil.integrations.catalog import get_skill
from vigil.integrations.errors import IntegrationError, UnknownSkillError
from vigil.integrations.framework import SkillContext
from vigil.integrations.runner import run_skill
from vigil.investigations.related import RELATED_SKILL_ID, related_alerts
from vigil.investigations.schemas import InvestigationPlan, StepRecord
from vigil.investigations.service import organization_of
from vigil.investigations.templates import TemplateRenderError, render_inputs
from vigil.playbooks.schemas import CheckpointStep, OnError, PlaybookStep, SkillStep

logger = logging.getLogger("vigil.engine")


class ConnectionResolver(Protocol):
    """Finds the organization's connection for a skill (the integrations domain implements this)."""

    def connected_integrations(self, session: Session, organization_uuid: uuid.UUID) -> set[str]: ...

    def skill_context(
        self, session: Session, organization_uuid: uuid.UUID, integration_id: str, connection_name: str | None
    ) -> SkillContext | None: ...


InternalSkill = Callable[[Session, InvestigationPlan], dict[str, Any]]

#: Skills Vigil runs itself against its own data: no connection, always available.
INTERNAL_SKILLS: dict[str, InternalSkill] = {
    RELATED_SKILL_ID: lambda session, plan: related_alerts(session, plan.alert_uuid, plan.entities),
}


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
        if isinstance(step, CheckpointStep):
            return StepRecord(
                **base,
                status=EvidenceStatus.SKIPPED,
                error="Chat checkpoints need a Slack connection with interactivity; none is set up",
            )
        if not isinstance(step, SkillStep):
            return StepRecord(**base, status=EvidenceStatus.OK)
        base["skill_id"] = step.skill
        try:
            inputs = render_inputs(step.inputs, plan.template_context())
        except TemplateRenderError as error:
            return self._failed(base, step, f"Template error in {error}", transient=False)
        base["inputs"] = inputs
        empty = sorted(name for name, value in inputs.items() if value == "")
        if empty:
            return StepRecord(
                **base,
                status=EvidenceStatus.SKIPPED,
                error=f"Skipped: the alert has no value for {', '.join(empty)}",
            )
        if step.skill in INTERNAL_SKILLS:
            return self._run_internal_skill(plan, step, base)
        return self._run_vendor_skill(plan, step, base, inputs)

    def _run_internal_skill(self, plan: InvestigationPlan, step: SkillStep, base: dict[str, Any]) -> StepRecord:
        """A crashing internal skill is one failed step (its `on_error` decides), not a crashed investigation."""
        try:
            with self.db.read() as session:
                output = INTERNAL_SKILLS[step.skill](session, plan)
        except Exception as error:
            logger.exception("internal skill %r failed", step.skill)
            return self._failed(base, step, f"{step.skill} failed: {type(error).__name__}", transient=True)
        return StepRecord(**base, status=EvidenceStatus.OK, output=output)

    def _run_vendor_skill(
        self, plan: InvestigationPlan, step: SkillStep, base: dict[str, Any], inputs: dict[str, str]
    ) -> StepRecord:
        try:
            skill = get_skill(step.skill)
        except UnknownSkillError:
            return self._failed(base, step, f"Unknown skill {step.skill!r}", transient=False)
        with self.db.read() as session:
            organization_uuid = organization_of(session, plan.alert_uuid)
            try:
                context = self.resolver.skill_context(session, organization_uuid, skill.integration_id, step.connection)
            except IntegrationError as error:
                return StepRecord(**base, status=EvidenceStatus.SKIPPED, error=error.message)
        if context is None:
            return StepRecord(
                **base,
                status=EvidenceStatus.SKIPPED,
                error=f"Skipped: the organization has no {skill.integration_id} connection",
            )
        base["connection_name"] = step.connection or context.connection_key
        last_error: IntegrationError | None = None
        for attempt in range(self.policy.retry_attempts):
            try:
                output = self.bridge.run(run_skill(step.skill, context, inputs), self.policy.timeout_seconds)
                return StepRecord(**base, status=EvidenceStatus.OK, output=output)
            except TimeoutError:
                last_error = IntegrationError(code="skill_timeout", message=f"{step.skill} timed out", transient=True)
            except IntegrationError as error:
                last_error = error
                if not error.transient:
                    break
            if skill.writes:
                # A write may have reached the vendor before the failure; sending it again could
                # isolate twice or add a duplicate rule. The HTTP layer already retried what was safe.
                break
            if attempt + 1 < self.policy.retry_attempts:
                time.sleep(self.policy.retry_backoff_seconds * (2**attempt))
        assert last_error is not None
        return self._failed(base, step, last_error.message, transient=last_error.transient)

    @staticmethod
    def _failed(base: dict[str, Any], step: SkillStep, message: str, *, transient: bool) -> StepRecord:
        return StepRecord(
            **base,
            status=EvidenceStatus.ERROR,
            error=message,
            fatal=step.on_error is OnError.FAIL,
            transient=transient,
        )
