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
    MACHINE_ACTIVITY,
    MACHINE_ALERTS,
    MACHINE_DETAILS,
    RECENT_EDGE_CHANGES,
    RELATED_ALERTS,
    USER_FINDINGS,
    LookupPlan,
    SkillId,
    first,
)
from vigil.ai.schemas import AvailableSkill, Category
from vigil.core.entities import Entities, EntityKind
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition, PlaybookStep, SkillStep

#: Per category, groups of alternatives: from each group the first plan that is runnable is drafted.
CATEGORY_PLANS: dict[Category, tuple[tuple[LookupPlan, ...], ...]] = {
    Category.ENDPOINT_MALWARE: ((MACHINE_DETAILS,), (MACHINE_ALERTS,), (MACHINE_ACTIVITY,), (HASH_PREVALENCE,)),
    Category.IDENTITY_SIGNIN: ((IDENTITY_ACCOUNT,), (USER_FINDINGS,), (IP_ON_ENDPOINTS,)),
    Category.CLOUD_CREDENTIALS: ((IP_ON_ENDPOINTS,), (MACHINE_ACTIVITY,), (IDENTITY_ACCOUNT,), (USER_FINDINGS,)),
    Category.DATA_EXFILTRATION: (
        (MACHINE_DETAILS,),
        (MACHINE_ALERTS,),
        (MACHINE_ACTIVITY,),
        (IP_ON_ENDPOINTS,),
        (DOMAIN_ON_ENDPOINTS,),
        (USER_FINDINGS,),
    ),
    Category.ACCOUNT_CHANGE: ((IDENTITY_ACCOUNT,), (USER_FINDINGS,), (ACTOR_EDGE_CHANGES,)),
    Category.EDGE_WAF_CHANGE: ((ACTOR_EDGE_CHANGES, RECENT_EDGE_CHANGES), (EDGE_INSIGHTS,), (IDENTITY_ACCOUNT,)),
    Category.PHISHING: (
        (MACHINE_ALERTS,),
        (DOMAIN_ON_ENDPOINTS,),
        (HASH_PREVALENCE,),
        (IDENTITY_ACCOUNT,),
        (USER_FINDINGS,),
    ),
    Category.GENERIC: (
        (MACHINE_DETAILS,),
        (MACHINE_ALERTS,),
        (MACHINE_ACTIVITY,),
        (HASH_PREVALENCE,),
        (IP_ON_ENDPOINTS,),
        (IDENTITY_ACCOUNT,),
        (USER_FINDINGS,),
    ),
}
ANALYZE_STEP_NAME = "AI analysis"
CHECKPOINT_QUESTION = (
    "Vigil is checking the alert '{{ alert.alert_type }}' ({{ alert.alert_id }}) that involves your account"
    "{% if entities.hosts %} on {{ entities.hosts[0] }}{% endif %}"
    "{% if entities.ips %} from IP address {{ entities.ips[0] }}{% endif %}"
    "{% if entities.domains %} and {{ entities.domains[0] }}{% endif %}. Did you do this yourself?"
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
    if chat_available and entities.emails:
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
