"""Playbook drafting: available read-only skills only, entity-guarded inputs, always ending in analyze."""

from __future__ import annotations

import pytest
from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from tests.ai import alerts
from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.schemas import AlertFacts, AvailableSkill
from vigil.investigations.entities import Entities, extract_entities
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition, SkillStep

#: Input names each skill declares (from the integration catalog); a draft may use no others.
SKILL_INPUTS = {
    "Look up related alerts": set(),
    "List Machines": {"hostname", "ip", "machine_id", "top"},
    "Fetch Alerts": {"severity", "status", "since", "machine_id", "top"},
    "Run Advanced Hunting Query": {"query"},
    "Edge Get Account Audit Logs for Detections": {
        "actor_email",
        "actor_ip",
        "since",
        "before",
        "zone",
        "page",
        "per_page",
    },
    "Get Edge Audit Logs": {"since", "before", "page", "per_page"},
    "Get Edge Zone Details": {"zone_id"},
    "Get Edge Security Center Insights": {"zone_id", "severity", "page", "per_page"},
    "Find Account by Email": {"email"},
    "List Accounts": {"email"},
    "Send Chat Message": {"text"},
}
REALISTIC = [
    alerts.DEFENDER,
    alerts.GUARDDUTY,
    alerts.CLOUDFLARE,
    alerts.OKTA_SIGNIN,
    alerts.ENTRA_SIGNIN,
    alerts.OKTA_MFA_RESET,
    alerts.PHISHING,
    alerts.GENERIC,
]
_ids = [alert.alert_type for alert in REALISTIC]
_jinja = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False)


def _draft(
    alert: AlertFacts, available: list[AvailableSkill] | None = None, chat_available: bool = False
) -> PlaybookDefinition:
    skills = alerts.ALL_READ_SKILLS if available is None else available
    return BuiltinInvestigator().draft_playbook(alert, extract_entities(alert.alert_content), skills, chat_available)


def _skill_steps(playbook: PlaybookDefinition) -> list[SkillStep]:
    return [step for step in playbook.steps if isinstance(step, SkillStep)]


def _render(template: str, alert: AlertFacts, entities: Entities) -> str:
    return _jinja.from_string(template).render(alert=alert, entities=entities)


@pytest.mark.parametrize("alert", REALISTIC, ids=_ids)
def test_draft_validates_as_a_playbook_and_ends_with_one_analyze_step(alert: AlertFacts) -> None:
    playbook = _draft(alert, chat_available=True)

    assert PlaybookDefinition.model_validate(playbook.model_dump()) == playbook
    assert isinstance(playbook.steps[-1], AnalyzeStep)
    assert sum(isinstance(step, AnalyzeStep) for step in playbook.steps) == 1
    assert len({step.name for step in playbook.steps}) == len(playbook.steps)


@pytest.mark.parametrize("alert", REALISTIC, ids=_ids)
def test_draft_uses_only_declared_input_names(alert: AlertFacts) -> None:
    for step in _skill_steps(_draft(alert)):
        assert set(step.inputs) <= SKILL_INPUTS[step.skill], step.name


@pytest.mark.parametrize("alert", REALISTIC, ids=_ids)
def test_draft_never_uses_write_skills_even_when_available(alert: AlertFacts) -> None:
    writes = [*alerts.WRITE_SKILLS, AvailableSkill(skill_id="List Machines", integration_id="x", writes=True)]
    available = [skill for skill in alerts.ALL_READ_SKILLS if skill.skill_id != "List Machines"] + writes

    used = {step.skill for step in _skill_steps(_draft(alert, available))}

    assert used.isdisjoint({skill.skill_id for skill in writes})


def test_without_connected_integrations_only_the_internal_lookup_and_analyze_remain() -> None:
    playbook = _draft(alerts.DEFENDER, available=[], chat_available=True)

    assert [step.kind for step in playbook.steps] == ["skill", "analyze"]
    assert _skill_steps(playbook)[0].skill == "Look up related alerts"
    assert _skill_steps(playbook)[0].inputs == {}


def test_endpoint_malware_draft_looks_up_machine_alerts_and_hash_prevalence() -> None:
    steps = _skill_steps(_draft(alerts.DEFENDER))

    assert [step.skill for step in steps] == [
        "Look up related alerts",
        "List Machines",
        "Fetch Alerts",
        "Run Advanced Hunting Query",
    ]
    assert steps[1].inputs == {"machine_id": "{{ entities.device_ids[0] if entities.device_ids else '' }}"}
    assert 'DeviceFileEvents | where SHA256 == "{{ entities.sha256s[0] }}" | take 50' in steps[3].inputs["query"]


def test_edge_change_draft_audits_the_actor_and_checks_insights() -> None:
    steps = _skill_steps(_draft(alerts.CLOUDFLARE))

    assert [step.skill for step in steps] == [
        "Look up related alerts",
        "Edge Get Account Audit Logs for Detections",
        "Get Edge Security Center Insights",
        "Find Account by Email",
    ]
    assert steps[1].inputs["actor_email"] == "{{ entities.emails[0] if entities.emails else '' }}"


def test_edge_change_without_an_actor_falls_back_to_the_account_audit_log() -> None:
    alert = alerts.alert("cloudflare", "WAF rule deleted", '{"rule": "block-bad-bots"}')

    skills = [step.skill for step in _skill_steps(_draft(alert))]

    assert "Get Edge Audit Logs" in skills
    assert "Edge Get Account Audit Logs for Detections" not in skills


def test_steps_needing_a_missing_entity_are_not_drafted() -> None:
    skills = {step.skill for step in _skill_steps(_draft(alerts.OKTA_SIGNIN))}

    assert "List Machines" not in skills  # a sign-in has no machine
    assert "Fetch Alerts" not in skills


def test_identity_lookup_falls_back_to_list_accounts_when_it_is_the_only_push_skill() -> None:
    available = [AvailableSkill(skill_id="List Accounts", integration_id="push_security")]

    steps = _skill_steps(_draft(alerts.ENTRA_SIGNIN, available))

    assert [step.skill for step in steps] == ["Look up related alerts", "List Accounts"]


@pytest.mark.parametrize(
    "alert",
    [alerts.OKTA_SIGNIN, alerts.OKTA_MFA_RESET, alerts.OAUTH_CONSENT, alerts.CLOUDFLARE],
    ids=["signin", "mfa_change", "oauth_consent", "edge_change_by_named_user"],
)
def test_checkpoint_asks_the_user_only_when_chat_is_available(alert: AlertFacts) -> None:
    with_chat = [step for step in _draft(alert, chat_available=True).steps if isinstance(step, CheckpointStep)]
    without_chat = [step for step in _draft(alert, chat_available=False).steps if isinstance(step, CheckpointStep)]

    assert len(with_chat) == 1
    assert without_chat == []
    assert with_chat[0].user_email == "{{ entities.emails[0] if entities.emails else '' }}"


def test_checkpoint_is_not_drafted_for_endpoint_alerts() -> None:
    playbook = _draft(alerts.DEFENDER, chat_available=True)

    assert not any(isinstance(step, CheckpointStep) for step in playbook.steps)


@pytest.mark.parametrize("alert", REALISTIC, ids=_ids)
def test_templates_render_for_the_drafting_alert(alert: AlertFacts) -> None:
    entities = extract_entities(alert.alert_content)

    for step in _skill_steps(_draft(alert, chat_available=True)):
        for template in step.inputs.values():
            assert _render(template, alert, entities) != ""


@pytest.mark.parametrize("alert", REALISTIC, ids=_ids)
def test_templates_render_empty_instead_of_failing_for_a_later_alert_without_entities(alert: AlertFacts) -> None:
    later = alerts.alert(alert.alert_provider, alert.alert_type, "no entities here")

    for step in _draft(alert, chat_available=True).steps:
        templates = list(step.inputs.values()) if isinstance(step, SkillStep) else []
        if isinstance(step, CheckpointStep):
            templates = [step.user_email]
            assert _render(step.question, later, Entities()).startswith("Vigil is checking")
        for template in templates:
            rendered = _render(template, later, Entities())
            assert rendered == "" or "{{" not in template, f"{step.name}: {rendered!r}"


def test_rendered_hash_query_carries_the_later_alerts_hash() -> None:
    query = _skill_steps(_draft(alerts.DEFENDER))[3].inputs["query"]

    rendered = _render(query, alerts.DEFENDER, Entities(sha256s=["b" * 64]))

    assert rendered == f'DeviceFileEvents | where SHA256 == "{"b" * 64}" | take 50'
