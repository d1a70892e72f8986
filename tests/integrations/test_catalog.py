"""The catalog itself: every declaration loads and is complete, and run_skill validates template inputs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from tests.fakes.fixtures import context
from vigil.integrations import catalog, runner
from vigil.integrations.errors import IntegrationError, UnknownIntegrationError, UnknownSkillError
from vigil.integrations.framework import Endpoints, skill
from vigil.integrations.http import OutboundClient

#: Integration → skill id → display name (the id before ids were namespaced, shown in the console and the seed).
EXPECTED_SKILLS = {
    "microsoft_defender": {
        "microsoft_defender.list_machines": "List Machines",
        "microsoft_defender.fetch_alerts": "Fetch Alerts",
        "microsoft_defender.run_advanced_hunting_query": "Run Advanced Hunting Query",
        "microsoft_defender.machine_live_response": "Machine Live Response",
        "microsoft_defender.isolate_machine": "Isolate Machine",
    },
    "cloudflare": {
        "cloudflare.edge_get_account_audit_logs_for_detections": "Edge Get Account Audit Logs for Detections",
        "cloudflare.get_edge_audit_logs": "Get Edge Audit Logs",
        "cloudflare.get_edge_security_center_insights": "Get Edge Security Center Insights",
        "cloudflare.list_edge_access_applications": "List Edge Access Applications",
        "cloudflare.get_edge_zone_details": "Get Edge Zone Details",
        "cloudflare.create_edge_ruleset_rule": "Create Edge Ruleset Rule",
    },
    "slack": {"slack.send_chat_message": "Send Chat Message", "chat.checkpoint": "Chat Checkpoint"},
    "push_security": {
        "push_security.list_accounts": "List Accounts",
        "push_security.find_account_by_email": "Find Account by Email",
        "push_security.get_security_findings_by_email": "Get Security Findings by Email",
    },
}
WRITE_SKILLS = {
    "microsoft_defender.machine_live_response",
    "microsoft_defender.isolate_machine",
    "cloudflare.create_edge_ruleset_rule",
    "slack.send_chat_message",
    "chat.checkpoint",
}


def _models(model: type[BaseModel], seen: set[type[BaseModel]]) -> None:
    """Every model reachable from ``model`` through its fields."""
    if model in seen:
        return
    seen.add(model)
    for info in model.model_fields.values():
        for arg in _types(info.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                _models(arg, seen)


def _types(annotation: Any) -> list[Any]:
    args = getattr(annotation, "__args__", None)
    return [annotation] if not args else [t for a in args for t in _types(a)]


def test_every_integration_and_skill_is_declared_completely() -> None:
    integrations = catalog.all_integrations()
    assert [i.id for i in integrations] == ["microsoft_defender", "cloudflare", "slack", "push_security"]
    skills = catalog.all_skills()
    assert len({s.id for s in skills}) == len(skills), "skill ids must be unique"
    for integration in integrations:
        assert {s.id: s.name for s in integration.skills} == EXPECTED_SKILLS[integration.id]
        assert len({f.name for f in integration.fields}) == len(integration.fields)
        for f in integration.fields:
            assert f.help.strip() and f.label.strip(), f"{integration.id}.{f.name} needs label and help"
            assert f.secret == (f.type == "secret") or f.name == "webhook_url"
    for declared in skills:
        assert declared.purpose and declared.permissions
        assert declared.writes == (declared.id in WRITE_SKILLS)
        seen: set[type[BaseModel]] = set()
        _models(declared.input_model, seen)
        _models(declared.output_model, seen)
        for model in seen:
            for name, info in model.model_fields.items():
                assert info.description, f"{declared.id}: {model.__name__}.{name} has no description"
        declared.input_model.model_json_schema()
        declared.output_model.model_json_schema(mode="serialization")


def test_catalog_json_shows_fields_and_skill_schemas() -> None:
    data = {entry["id"]: entry for entry in catalog.catalog_json()}
    cloudflare = data["cloudflare"]
    methods = {f["name"]: f["auth_methods"] for f in cloudflare["fields"]}
    assert methods["api_token"] == ["api_token"]
    assert methods["global_api_key"] == methods["email"] == ["global_key"]
    assert methods["account_id"] == methods["zone_id"] == []
    machines = next(s for s in data["microsoft_defender"]["skills"] if s["id"] == "microsoft_defender.list_machines")
    assert machines["name"] == "List Machines"
    assert machines["permissions"] == ["Machine.Read.All (or Machine.ReadWrite.All)"]  # least privilege first
    assert set(machines["input_schema"]["properties"]) == {"hostname", "ip", "machine_id", "top"}
    assert "machines" in machines["output_schema"]["properties"]


def test_display_names_the_old_ids_still_resolve_to_the_namespaced_skills() -> None:
    for integration_id, skills in EXPECTED_SKILLS.items():
        for skill_id, name in skills.items():
            assert catalog.canonical_skill_id(name) == catalog.canonical_skill_id(skill_id) == skill_id
            assert catalog.get_skill(name).id == skill_id and catalog.skill_name(skill_id) == name
            assert skill_id.startswith((f"{integration_id}.", "chat."))
    assert catalog.canonical_skill_id("Look up related alerts") == catalog.RELATED_SKILL_ID == "vigil.related_alerts"
    assert catalog.canonical_skill_id("No Such Skill") == "No Such Skill"  # left for the caller to refuse
    names = [s.name for s in catalog.all_skills()]
    assert len(set(names)) == len(names), "a display name shared by two skills would resolve to the first only"


def test_a_skill_id_must_be_namespaced_by_its_integration() -> None:
    for bad in ("List Machines", "cloudflare.list_machines", "microsoft_defender.List Machines"):
        with pytest.raises(ValueError, match="must be microsoft_defender"):
            skill(integration="microsoft_defender", id=bad, name="X", purpose="x", permissions=(), writes=False)


def test_unknown_ids_raise_typed_lookup_errors() -> None:
    with pytest.raises(UnknownIntegrationError):
        catalog.get_integration("okta")
    with pytest.raises(UnknownSkillError):
        catalog.get_skill("Delete Everything")
    assert isinstance(UnknownSkillError("x"), KeyError)


def test_template_strings_coerce_into_skill_inputs() -> None:
    model = catalog.get_skill("Fetch Alerts").input_model
    params = runner.validate_inputs(
        model, {"top": "5", "severity": "high", "status": "", "since": "2024-05-20T00:00:00Z", "machine_id": ""}
    )
    assert params.model_dump()["top"] == 5
    assert params.model_dump()["severity"] == "High"
    assert params.model_dump()["status"] is None and params.model_dump()["machine_id"] is None
    live = catalog.get_skill("Machine Live Response").input_model
    decoded = runner.validate_inputs(
        live,
        {
            "machine_id": "abc",
            "comment": "collect",
            "commands": '[{"type": "RunScript", "params": [{"key": "ScriptName", "value": "minidump.ps1"}]}]',
        },
    )
    assert decoded.model_dump()["commands"][0]["type"] == "RunScript"


@pytest.mark.parametrize(
    "inputs",
    [{"top": "many"}, {"top": 0}, {"unknown": 1}, {"severity": "Catastrophic"}],
)
def test_invalid_skill_input_is_a_permanent_typed_error(inputs: dict[str, object]) -> None:
    async def call() -> None:
        async with OutboundClient() as http:
            await runner.run_skill("Fetch Alerts", context(http, {}, Endpoints()), inputs)

    with pytest.raises(IntegrationError) as caught:
        asyncio.run(call())
    assert caught.value.code == "invalid_skill_input"
    assert caught.value.transient is False


def test_connection_test_reports_missing_fields_without_calling_out() -> None:
    async def call() -> Any:
        async with OutboundClient() as http:
            values = {"auth_method": "global_key", "account_id": "x", "api_token": "ignored"}
            return await runner.test_connection("cloudflare", context(http, values, Endpoints()))

    result = asyncio.run(call())
    assert result.ok is False
    assert result.cause == "Connection details incomplete"
    assert "Authentication Email is required." in (result.remedy or "")
    assert "Global API Key is required." in (result.remedy or "")
