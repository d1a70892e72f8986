"""Draft a playbook for a new alert type: category-specific lookups the organization can run, then analyze.

Only read-only skills are ever drafted: a playbook runs unattended for every later alert of its type, so
containment (isolate, block, create rule) stays a recommended action for a person to take.
"""

from __future__ import annotations

from collections.abc import Sequence

from vigil.ai.builtin.catalog import (
    ACTOR_EDGE_CHANGES,
    DOMAIN_ON_ENDPOINTS,
    EDGE_INSIGHTS,
    HASH_PREVALENCE,
    IDENTITY_ACCOUNT,
    IP_ON_ENDPOINTS,
    MACHINE_ALERTS,
    MACHINE_DETAILS,
    RECENT_EDGE_CHANGES,
    RELATED_ALERTS,
    LookupPlan,
    SkillId,
    first,
)
from vigil.ai.schemas import AvailableSkill, Category
from vigil.investigations.entities import Entities, EntityKind
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition, PlaybookStep, SkillStep

#: Per category, groups of alternatives: from each group the first plan that is runnable is drafted.
CATEGORY_PLANS: dict[Category, tuple[tuple[LookupPlan, ...], ...]] = {
    Category.ENDPOINT_MALWARE: ((MACHINE_DETAILS,), (MACHINE_ALERTS,), (HASH_PREVALENCE,)),
    Category.IDENTITY_SIGNIN: ((IDENTITY_ACCOUNT,), (IP_ON_ENDPOINTS,)),
    Category.ACCOUNT_CHANGE: ((IDENTITY_ACCOUNT,), (ACTOR_EDGE_CHANGES,)),
    Category.EDGE_WAF_CHANGE: ((ACTOR_EDGE_CHANGES, RECENT_EDGE_CHANGES), (EDGE_INSIGHTS,), (IDENTITY_ACCOUNT,)),
    Category.PHISHING: ((DOMAIN_ON_ENDPOINTS,), (HASH_PREVALENCE,), (IDENTITY_ACCOUNT,)),
    Category.GENERIC: ((MACHINE_DETAILS,), (HASH_PREVALENCE,), (IP_ON_ENDPOINTS,), (IDENTITY_ACCOUNT,)),
}
#: Categories where the person named in the alert can tell us whether it was them: their sign-ins, their MFA,
#: OAuth or account changes, and token or rule changes at the edge made under their name.
CHECKPOINT_CATEGORIES = frozenset({Category.IDENTITY_SIGNIN, Category.ACCOUNT_CHANGE, Category.EDGE_WAF_CHANGE})
ANALYZE_STEP_NAME = "AI analysis"
CHECKPOINT_QUESTION = (
    "Vigil is checking the alert '{{ alert.alert_type }}' ({{ alert.alert_id }}) that involves your account"
    "{% if entities.ips %} from IP address {{ entities.ips[0] }}{% endif %}. Was this you?"
)


def draft_playbook(
    category: Category,
    entities: Entities,
    available: Sequence[AvailableSkill],
    chat_available: bool,
) -> PlaybookDefinition:
    """Related-alert lookup, the category's runnable lookups, an optional chat checkpoint, then analyze."""
    runnable = {SkillId.RELATED_ALERTS.value} | {skill.skill_id for skill in available if not skill.writes}
    steps: list[PlaybookStep] = []
    for group in ((RELATED_ALERTS,), *CATEGORY_PLANS[category]):
        step = _first_runnable(group, entities, runnable)
        if step is not None:
            steps.append(step)
    if chat_available and category in CHECKPOINT_CATEGORIES and entities.emails:
        steps.append(
            CheckpointStep(
                name="Ask the user to confirm",
                user_email=first(EntityKind.EMAILS),
                question=CHECKPOINT_QUESTION,
            )
        )
    steps.append(AnalyzeStep(name=ANALYZE_STEP_NAME))
    return PlaybookDefinition(steps=steps)


def _first_runnable(group: tuple[LookupPlan, ...], entities: Entities, runnable: set[str]) -> SkillStep | None:
    for plan in group:
        inputs = plan.inputs(entities)
        if inputs is None:
            continue
        skill = next((skill for skill in plan.skills if skill.value in runnable), None)
        if skill is not None:
            return SkillStep(name=plan.name, skill=skill.value, inputs=inputs)
    return None
