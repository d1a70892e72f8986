"""Draft a playbook for a new alert type: category-specific lookups the organization can run, then analyze.

Only read-only skills are ever drafted: a playbook runs unattended for every later alert of its type, so
containment (isolate, block, create rule) stays a recommended action for a person to take.
"""

from __future__ import annotations

from collections.abc import Sequence

from vigil.ai.builtin import vendor_knowledge
from vigil.ai.schemas import AvailableSkill
from vigil.core.entities import Entities, EntityKind
from vigil.evidence.knowledge import Category, Lookup, first
from vigil.integrations.catalog import RELATED_SKILL_ID, skill_name
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition, PlaybookStep, SkillStep

#: Per category, groups of alternatives: from each group the first lookup that is runnable is drafted (from the
#: integration folders that offer it, in the catalog's order).
CATEGORY_LOOKUPS: dict[Category, tuple[tuple[Lookup, ...], ...]] = {
    Category.ENDPOINT_MALWARE: (
        (Lookup.MACHINE_DETAILS,),
        (Lookup.MACHINE_ALERTS,),
        (Lookup.MACHINE_ACTIVITY,),
        (Lookup.HASH_PREVALENCE,),
    ),
    Category.IDENTITY_SIGNIN: ((Lookup.USER_ACCOUNT,), (Lookup.USER_FINDINGS,), (Lookup.IP_ON_ENDPOINTS,)),
    Category.CLOUD_CREDENTIALS: (
        (Lookup.IP_ON_ENDPOINTS,),
        (Lookup.MACHINE_ACTIVITY,),
        (Lookup.USER_ACCOUNT,),
        (Lookup.USER_FINDINGS,),
    ),
    Category.DATA_EXFILTRATION: (
        (Lookup.MACHINE_DETAILS,),
        (Lookup.MACHINE_ALERTS,),
        (Lookup.MACHINE_ACTIVITY,),
        (Lookup.IP_ON_ENDPOINTS,),
        (Lookup.DOMAIN_ON_ENDPOINTS,),
        (Lookup.USER_FINDINGS,),
    ),
    Category.ACCOUNT_CHANGE: ((Lookup.USER_ACCOUNT,), (Lookup.USER_FINDINGS,), (Lookup.ACTOR_CHANGES,)),
    Category.EDGE_WAF_CHANGE: (
        (Lookup.ACTOR_CHANGES, Lookup.RECENT_CHANGES),
        (Lookup.SECURITY_POSTURE,),
        (Lookup.USER_ACCOUNT,),
    ),
    Category.PHISHING: (
        (Lookup.MACHINE_ALERTS,),
        (Lookup.DOMAIN_ON_ENDPOINTS,),
        (Lookup.HASH_PREVALENCE,),
        (Lookup.USER_ACCOUNT,),
        (Lookup.USER_FINDINGS,),
    ),
    Category.GENERIC: (
        (Lookup.MACHINE_DETAILS,),
        (Lookup.MACHINE_ALERTS,),
        (Lookup.MACHINE_ACTIVITY,),
        (Lookup.HASH_PREVALENCE,),
        (Lookup.IP_ON_ENDPOINTS,),
        (Lookup.USER_ACCOUNT,),
        (Lookup.USER_FINDINGS,),
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
    runnable = {skill.skill_id for skill in available if not skill.writes}
    steps: list[PlaybookStep] = [SkillStep(name=skill_name(RELATED_SKILL_ID), skill=RELATED_SKILL_ID, inputs={})]
    for group in CATEGORY_LOOKUPS[category]:
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


def _first_runnable(group: tuple[Lookup, ...], entities: Entities, runnable: set[str]) -> SkillStep | None:
    for purpose in group:
        for plan in vendor_knowledge.lookup_plans(purpose):
            inputs = plan.inputs(entities)
            if inputs is not None and plan.skill in runnable:
                return SkillStep(name=plan.name, skill=plan.skill, inputs=inputs)
    return None
