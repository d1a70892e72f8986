"""The rule-based analyst behind ``VIGIL_AI_MODEL=builtin``: offline, deterministic, explainable."""

from __future__ import annotations

from collections.abc import Sequence

from vigil.ai.builtin.analysis import analyze
from vigil.ai.builtin.classify import classify
from vigil.ai.builtin.drafting import draft_playbook
from vigil.ai.investigator import AiCalls, Drafted
from vigil.ai.schemas import Analysis, AvailableSkill, Evidence
from vigil.core.entities import Entities
from vigil.evidence.signals import AlertFacts

BUILTIN_MODEL = "builtin"


class BuiltinInvestigator:
    """Classifies the alert, then drafts from the category's lookups and scores with documented rules."""

    model = BUILTIN_MODEL
    takes_tools = False

    def draft_playbook(
        self,
        alert: AlertFacts,
        entities: Entities,
        available: Sequence[AvailableSkill],
        chat_available: bool,
        calls: AiCalls | None = None,
    ) -> Drafted:
        definition = draft_playbook(classify(alert, entities), entities, available, chat_available)
        return Drafted(definition, "Drafted by the built-in analyst for the first alert of this type")

    def analyze(
        self, alert: AlertFacts, entities: Entities, evidence: Sequence[Evidence], calls: AiCalls | None = None
    ) -> Analysis:
        return analyze(alert, classify(alert, entities), entities, evidence)
