"""The analyst's rules, one module per evidence source; `SKILL_RULES` maps a skill id to the rule reading it."""

from __future__ import annotations

from vigil.ai.builtin.catalog import SkillId
from vigil.ai.builtin.rules import context, defender, edge, identity
from vigil.ai.builtin.signals import SkillRule

SKILL_RULES: dict[str, SkillRule] = {
    SkillId.RELATED_ALERTS: context.related_alerts,
    SkillId.FETCH_ALERTS: defender.machine_alerts,
    SkillId.LIST_MACHINES: defender.machine_details,
    SkillId.HUNTING_QUERY: defender.hunting,
    SkillId.EDGE_DETECTION_AUDIT_LOGS: edge.audit_changes(attributed=True),
    SkillId.EDGE_AUDIT_LOGS: edge.audit_changes(attributed=False),
    SkillId.EDGE_INSIGHTS: edge.insights,
    SkillId.FIND_ACCOUNT: identity.accounts,
    SkillId.LIST_ACCOUNTS: identity.accounts,
    SkillId.SECURITY_FINDINGS: identity.findings,
}
