"""The one interface the investigation engine talks to, whatever model sits behind `VIGIL_AI_MODEL`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from vigil.ai.schemas import AlertFacts, Analysis, AvailableSkill, Evidence
from vigil.investigations.entities import Entities
from vigil.playbooks.schemas import PlaybookDefinition


class Investigator(Protocol):
    """Drafts a playbook for a new alert type and turns gathered evidence into an analysis.

    Both calls are pure with respect to Vigil's state (no database, no skills run here), so the engine can
    record them as durable workflow steps and replay them safely.
    """

    def draft_playbook(
        self,
        alert: AlertFacts,
        entities: Entities,
        available: Sequence[AvailableSkill],
        chat_available: bool,
    ) -> PlaybookDefinition:
        """A playbook for this alert's type using only `available` read-only skills, ending in analyze."""
        ...

    def analyze(self, alert: AlertFacts, entities: Entities, evidence: Sequence[Evidence]) -> Analysis:
        """Verdict, severity, proposed disposition and a written summary over the evidence gathered."""
        ...
