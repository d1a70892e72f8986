"""The one interface the investigation engine talks to, whatever model sits behind `VIGIL_AI_MODEL`."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from vigil.ai.schemas import Analysis, AvailableSkill, Evidence
from vigil.ai.transcript import Exchange
from vigil.core.entities import Entities
from vigil.evidence.signals import AlertFacts
from vigil.playbooks.schemas import PlaybookDefinition


class DurableCalls(Protocol):
    """Runs an outside call once and keeps its record; a replayed investigation gets the record back.

    The engine backs this with DBOS steps (and stores each record on the case), so a crash between two model
    calls never repeats the first one.
    """

    def once(self, call: Callable[[], Exchange]) -> Exchange: ...

    def clock(self) -> float:
        """Wall-clock seconds, recorded too, so a budget measured across a restart stays honest."""
        ...


class SkillTools(Protocol):
    """The organization's read-only skills, callable for follow-up questions while the verdict is written."""

    def call(self, skill_id: str, inputs: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
        """The skill's output, or None and why it failed or was skipped."""
        ...


class DirectCalls:
    """Calls made as they come, recorded nowhere: for callers outside the durable engine."""

    def once(self, call: Callable[[], Exchange]) -> Exchange:
        return call()

    def clock(self) -> float:
        return time.time()


class NoTools:
    def call(self, skill_id: str, inputs: dict[str, str]) -> tuple[dict[str, Any] | None, str | None]:
        return None, f"{skill_id} cannot run here: no skills are connected"


@dataclass(frozen=True)
class AiCalls:
    """How an investigator reaches the world: durable calls, and the skills it may ask follow-up questions of."""

    durable: DurableCalls = field(default_factory=DirectCalls)
    tools: SkillTools = field(default_factory=NoTools)
    tool_skills: Sequence[AvailableSkill] = ()


@dataclass(frozen=True)
class Drafted:
    """A drafted playbook and the note its first version carries (who drafted it, and any fallback)."""

    definition: PlaybookDefinition
    note: str


class Investigator(Protocol):
    """Drafts a playbook for a new alert type and turns gathered evidence into an analysis.

    Neither call touches Vigil's database; every outside call goes through `AiCalls`, so the engine can run
    them as durable workflow steps and replay them safely.
    """

    #: The model string shown on cases and in metrics (`builtin`, `openai-chat:…`).
    model: str
    #: Whether `analyze` may call skills as tools (the engine then offers the organization's read-only ones).
    takes_tools: bool

    def draft_playbook(
        self,
        alert: AlertFacts,
        entities: Entities,
        available: Sequence[AvailableSkill],
        chat_available: bool,
        calls: AiCalls | None = None,
    ) -> Drafted:
        """A playbook for this alert's type using only `available` skills, ending in analyze."""
        ...

    def analyze(
        self, alert: AlertFacts, entities: Entities, evidence: Sequence[Evidence], calls: AiCalls | None = None
    ) -> Analysis:
        """Verdict, severity, proposed disposition and a written summary over the evidence gathered."""
        ...
