"""What the integration folders tell the analyst, discovered the way the catalog discovers skills.

Each vendor folder may have an ``analyst.py`` declaring ``KNOWLEDGE`` (`vigil.evidence.knowledge`); this module
gathers them, in the catalog's order, and turns the mappings into rules. Nothing here names a vendor.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from vigil.ai.builtin.rules import context, endpoint, org_facts
from vigil.ai.schemas import Evidence
from vigil.core.entities import Entities
from vigil.evidence.facts import ORG_FACTS_SKILL_ID
from vigil.evidence.knowledge import AnalystKnowledge, Category, Lookup, LookupPlan, Reading
from vigil.evidence.signals import AlertFacts, AlertReader, Signal, SkillReader
from vigil.integrations.catalog import RELATED_SKILL_ID, vendor_modules


@functools.cache
def all_knowledge() -> tuple[AnalystKnowledge, ...]:
    found = []
    for module in vendor_modules("analyst"):
        knowledge = getattr(module, "KNOWLEDGE", None)
        if not isinstance(knowledge, AnalystKnowledge):
            raise TypeError(f"{module.__name__} must declare KNOWLEDGE = AnalystKnowledge(...)")
        found.append(knowledge)
    return tuple(found)


def _rule(reading: Reading) -> SkillReader:
    return reading if callable(reading) else endpoint.reader(reading)


@functools.cache
def skill_rules() -> dict[str, SkillReader]:
    """Skill id -> the rule reading its output: Vigil's own related-alert lookup and organization facts, then every
    vendor's."""
    rules: dict[str, SkillReader] = {RELATED_SKILL_ID: context.related_alerts, ORG_FACTS_SKILL_ID: org_facts.org_facts}
    for knowledge in all_knowledge():
        rules.update((skill_id, _rule(reading)) for skill_id, reading in knowledge.readings.items())
    return rules


def read_step(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
    """The signals of one successful skill step; a skill no folder knows how to read says nothing."""
    rule = skill_rules().get(item.skill_id or "")
    return rule(item.step(), alert, entities) if rule is not None else []


def alert_readers() -> Iterable[AlertReader]:
    return (reader for knowledge in all_knowledge() for reader in knowledge.alert_readers)


def lookup_plans(purpose: Lookup) -> list[LookupPlan]:
    """The plans that answer `purpose`, in catalog order: the first one the organization can run is drafted."""
    return [plan for knowledge in all_knowledge() for plan in knowledge.lookups if plan.purpose is purpose]


@functools.cache
def counted_once() -> frozenset[str]:
    return frozenset().union(*(knowledge.counted_once for knowledge in all_knowledge()))


@functools.cache
def undeniable() -> frozenset[str]:
    return frozenset().union(*(knowledge.undeniable for knowledge in all_knowledge()))


def containment(category: Category, used_skills: set[str]) -> tuple[str, ...] | None:
    """Containment in a product the investigation used (one of its skills ran), for this category, if any."""
    for knowledge in all_knowledge():
        steps = knowledge.containment.get(category)
        if steps and knowledge.skills & used_skills:
            return steps
    return None
