"""Pick the investigator for a model choice: the built-in analyst, or a pydantic-ai model."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.builtin.investigator import BUILTIN_MODEL
from vigil.ai.errors import UnsupportedModelError
from vigil.ai.investigator import AiCalls, Drafted, Investigator
from vigil.ai.llm.config import Limits, ModelChoice
from vigil.ai.schemas import Analysis, AvailableSkill, Evidence
from vigil.core.entities import Entities
from vigil.evidence.signals import AlertFacts
from vigil.integrations.bridge import AsyncBridge


def is_builtin(model: str) -> bool:
    return model.strip().lower() == BUILTIN_MODEL


def check_usable(choice: ModelChoice) -> None:
    """Raise `UnsupportedModelError` for a model this build cannot use (unknown provider, no key), without
    starting anything: the start-up checks, `vigil eval` and a saved organization override all ask this."""
    if not is_builtin(choice.model):
        from vigil.ai.llm.connect import build_model  # pydantic-ai loads only when a model needs it (fast starts)

        build_model(choice, request_timeout_seconds=1.0)


def get_investigator(
    choice: ModelChoice,
    limits: Limits | None = None,
    skill_inputs: Mapping[str, type[BaseModel]] | None = None,
    bridge: AsyncBridge | None = None,
) -> Investigator:
    """The built-in analyst for `builtin`; an LLM investigator otherwise (`UnsupportedModelError` if unusable)."""
    if is_builtin(choice.model):
        return BuiltinInvestigator()
    from vigil.ai.llm.investigator import LlmInvestigator  # pydantic-ai loads only when a model needs it

    return LlmInvestigator(choice, limits or Limits(), skill_inputs or {}, bridge)


class UnavailableModel:
    """An organization's model that cannot be used now (its key no longer decrypts, its provider is unknown):
    the built-in analyst investigates, and the playbook note and the case say why."""

    model = BUILTIN_MODEL
    takes_tools = False

    def __init__(self, wanted: str, reason: str) -> None:
        self._why = f"{wanted or 'the configured model'} is unavailable: {reason}"
        self._builtin = BuiltinInvestigator()

    def draft_playbook(
        self,
        alert: AlertFacts,
        entities: Entities,
        available: Sequence[AvailableSkill],
        chat_available: bool,
        calls: AiCalls | None = None,
    ) -> Drafted:
        drafted = self._builtin.draft_playbook(alert, entities, available, chat_available)
        return Drafted(drafted.definition, f"Drafted by the built-in analyst because {self._why}")

    def analyze(
        self, alert: AlertFacts, entities: Entities, evidence: Sequence[Evidence], calls: AiCalls | None = None
    ) -> Analysis:
        return self._builtin.analyze(alert, entities, evidence).model_copy(update={"fallback_reason": self._why})


class Investigators:
    """One investigator per model choice, built on first use and kept (clients and their pools are reused)."""

    def __init__(
        self, limits: Limits, skill_inputs: Mapping[str, type[BaseModel]], bridge: AsyncBridge | None = None
    ) -> None:
        self._limits = limits
        self._skill_inputs = skill_inputs
        self._bridge = bridge
        self._by_choice: dict[ModelChoice, Investigator] = {}
        self._lock = threading.Lock()

    def require(self, choice: ModelChoice) -> Investigator:
        """The investigator for `choice`, raising `UnsupportedModelError` instead of falling back (start-up checks
        of the service's own model: a misconfigured service must not start)."""
        with self._lock:
            investigator = self._by_choice.get(choice)
            if investigator is None:
                investigator = self._by_choice[choice] = get_investigator(
                    choice, self._limits, self._skill_inputs, self._bridge
                )
            return investigator

    def for_choice(self, choice: ModelChoice) -> Investigator:
        """The investigator for `choice`; a model that cannot be used gives the built-in analyst, saying why."""
        with self._lock:
            investigator = self._by_choice.get(choice)
            if investigator is None:
                try:
                    investigator = get_investigator(choice, self._limits, self._skill_inputs, self._bridge)
                except UnsupportedModelError as error:
                    return UnavailableModel(choice.model, str(error))
                self._by_choice[choice] = investigator
            return investigator

    def close(self) -> None:
        with self._lock:
            for investigator in self._by_choice.values():
                close = getattr(investigator, "close", None)  # an LLM investigator holds a provider client
                if close is not None:
                    close()
            self._by_choice.clear()
