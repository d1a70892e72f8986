"""The LLM investigator: a pydantic-ai model drafts playbooks and writes verdicts; the built-in analyst catches it.

Whatever goes wrong with the model (timeouts, rate limits, an answer that stays invalid after one repair, a spent
budget), the investigation still ends with a case: the built-in analyst finishes it and the case says why.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_ai.messages import ModelResponse

from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.builtin.classify import classify
from vigil.ai.builtin.rules.alert import injection_citations
from vigil.ai.investigator import AiCalls, Drafted
from vigil.ai.llm.config import Limits, ModelChoice
from vigil.ai.llm.connect import build_model
from vigil.ai.llm.conversation import Conversation, LlmFailure
from vigil.ai.llm.outputs import AnalysisAnswer, DraftAnswer, analysis_problems, to_analysis, to_playbook
from vigil.ai.llm.prompts import ANALYZE_INSTRUCTIONS, DRAFT_INSTRUCTIONS, analysis_prompt, draft_prompt
from vigil.ai.llm.tools import ToolIndex
from vigil.ai.schemas import Analysis, AvailableSkill, Evidence
from vigil.ai.transcript import Stage
from vigil.core.entities import Entities
from vigil.evidence.signals import AlertFacts
from vigil.integrations.bridge import AsyncBridge

logger = logging.getLogger("vigil.ai")
CLIENT_CLOSE_SECONDS = 5.0


class LlmInvestigator:
    """Drafts and analyses with one configured model; `model` is its model string."""

    takes_tools = True

    def __init__(
        self,
        choice: ModelChoice,
        limits: Limits,
        skill_inputs: Mapping[str, type[BaseModel]],
        bridge: AsyncBridge | None = None,
    ) -> None:
        """`bridge`: the process's event-loop thread (the engine's, shared with skills); without one the
        investigator runs its own and stops it on `close`."""
        self.model = choice.model
        self._llm = build_model(choice, limits.request_timeout_seconds)
        self._limits = limits
        self._skill_inputs = skill_inputs
        self._builtin = BuiltinInvestigator()
        self._owns_bridge = bridge is None
        self._bridge = bridge or AsyncBridge()
        self._secrets = (choice.api_key.get_secret_value(),) if choice.api_key is not None else ()

    def close(self) -> None:
        """Close the provider client on the loop its connections live on (and stop that loop if it is ours)."""
        client = getattr(self._llm, "client", None)
        closing = getattr(client, "close", None)
        if callable(closing):
            try:
                self._bridge.run(closing(), CLIENT_CLOSE_SECONDS)
            except Exception:  # a client that cannot close cleanly must not stop the engine from stopping
                logger.warning("model %s: its client did not close cleanly", self.model, exc_info=True)
        if self._owns_bridge:
            self._bridge.close()

    def _run_async(self, coroutine: Coroutine[Any, Any, ModelResponse], timeout: float) -> ModelResponse:
        return self._bridge.run(coroutine, timeout)

    def _conversation(self, calls: AiCalls, stage: Stage) -> Conversation:
        return Conversation(self._llm, self.model, self._limits, self._run_async, calls, stage, self._secrets)

    def draft_playbook(
        self,
        alert: AlertFacts,
        entities: Entities,
        available: Sequence[AvailableSkill],
        chat_available: bool,
        calls: AiCalls | None = None,
    ) -> Drafted:
        conversation = self._conversation(calls or AiCalls(), Stage.DRAFT)

        def problems(answer: DraftAnswer) -> list[str]:
            return to_playbook(answer, available, chat_available, self._skill_inputs)[1]

        try:
            answer = conversation.run(
                DRAFT_INSTRUCTIONS,
                draft_prompt(alert, entities, available, chat_available),
                DraftAnswer,
                ToolIndex.of(()),
                problems,
            )
        except LlmFailure as failure:
            logger.warning(
                "model %s could not draft a playbook (%s); using the built-in draft", self.model, failure.kind
            )
            drafted = self._builtin.draft_playbook(alert, entities, available, chat_available)
            return Drafted(
                drafted.definition,
                f"Drafted by the built-in analyst because {self.model} could not ({failure.kind}: {failure.reason})",
            )
        definition, _ = to_playbook(answer, available, chat_available, self._skill_inputs)
        assert definition is not None  # `problems` was empty
        return Drafted(definition, f"Drafted by {self.model} for the first alert of this type: {answer.rationale}")

    def analyze(
        self, alert: AlertFacts, entities: Entities, evidence: Sequence[Evidence], calls: AiCalls | None = None
    ) -> Analysis:
        calls = calls or AiCalls()
        conversation = self._conversation(calls, Stage.ANALYZE)

        def problems(answer: AnalysisAnswer) -> list[str]:
            return analysis_problems(answer, evidence, conversation.tool_sources)

        try:
            answer = conversation.run(
                ANALYZE_INSTRUCTIONS,
                analysis_prompt(alert, entities, evidence),
                AnalysisAnswer,
                ToolIndex.of(calls.tool_skills),
                problems,
            )
        except LlmFailure as failure:
            logger.warning("model %s could not analyse (%s); the built-in analyst finishes", self.model, failure.kind)
            analysis = self._builtin.analyze(alert, entities, evidence)
            return analysis.model_copy(
                update={"fallback_reason": f"{self.model} could not finish ({failure.kind}): {failure.reason}"}
            )
        return to_analysis(answer, classify(alert, entities), self.model, injection_citations(alert), evidence)
