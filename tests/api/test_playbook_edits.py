"""PUT /serviceapi/playbooks/{uuid}: edits are checked against the same catalog as the console's editor."""

from __future__ import annotations

import uuid
from typing import Any

from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.playbooks.schemas import AnalyzeStep, PlaybookDefinition, SkillStep


def _playbook(harness: Harness, org: str = "ACME") -> uuid.UUID:
    definition = PlaybookDefinition(steps=[AnalyzeStep(name="AI analysis")])
    return install_playbook(harness.db, org, "okta", "Suspicious sign-in", definition)


def _steps(*skill_steps: dict[str, Any]) -> dict[str, Any]:
    return {"definition": {"steps": [*skill_steps, {"kind": "analyze", "name": "AI analysis"}]}, "note": "edit"}


def test_playbook_edit_is_checked_against_the_catalog_and_saved_as_a_new_version(harness: Harness) -> None:
    harness.add_org("ACME")
    harness.add_org("BETA")
    key = harness.add_key("ACME").api_key
    other = harness.add_key("BETA").api_key
    playbook_uuid = _playbook(harness)
    url = f"/serviceapi/playbooks/{playbook_uuid}"

    def put(body: dict[str, Any], api_key: str = key) -> Any:
        return harness.client.put(url, json=body, headers={"Authorization": f"Bearer {api_key}"})

    unknown = put(_steps({"kind": "skill", "name": "Lookup", "skill": "No Such Skill"}))
    assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "unknown_skill"
    undeclared = put(_steps({"kind": "skill", "name": "Hosts", "skill": "List Machines", "inputs": {"bogus": "x"}}))
    assert undeclared.status_code == 422 and undeclared.json()["error"]["code"] == "invalid_step_inputs"
    assert undeclared.json()["error"]["details"][0]["field"] == "steps.0.inputs.bogus"
    assert put(_steps(), other).status_code == 404  # another tenant's playbook is not found, not named

    step = SkillStep(name="Hosts", skill="List Machines", inputs={"hostname": "{{ entities.hosts[0] }}"})
    saved = put(_steps(step.model_dump(mode="json")))
    assert saved.status_code == 200, saved.text
    assert (
        saved.json()["version"] == 2
        and saved.json()["definition"]["steps"][0]["skill"] == "microsoft_defender.list_machines"
    )


def test_chat_checkpoint_written_as_a_skill_step_needs_only_what_a_playbook_gives(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    url = f"/serviceapi/playbooks/{_playbook(harness)}"
    step = {
        "kind": "skill",
        "name": "Ask the user",
        "skill": "Chat Checkpoint",
        "inputs": {"user_email": "{{ entities.emails[0] }}", "question": "Was this you?"},
    }
    saved = harness.client.put(url, json=_steps(step), headers={"Authorization": f"Bearer {key}"})
    assert saved.status_code == 200, saved.text
    missing = harness.client.put(
        url, json=_steps({**step, "inputs": {"question": "Was this you?"}}), headers={"Authorization": f"Bearer {key}"}
    )
    assert missing.status_code == 422 and missing.json()["error"]["details"][0]["field"] == "steps.0.inputs.user_email"


def test_version_beyond_32_bits_and_nul_in_a_step_are_422_naming_the_field(harness: Harness) -> None:
    """Issue 14: `?version=` beyond the INTEGER column and NUL in a step's text once answered 500."""
    harness.add_org("ACME")
    key = {"Authorization": f"Bearer {harness.add_key('ACME').api_key}"}
    url = f"/serviceapi/playbooks/{_playbook(harness)}"
    for version in (2**31, 2**70):
        response = harness.client.get(url, params={"version": version}, headers=key)
        assert response.status_code == 422
        assert response.json()["error"]["details"][0]["field"] == "query.version"
    body = _steps({"kind": "skill", "name": "Hosts", "skill": "List Machines", "inputs": {"hostname": "h\x00"}})
    response = harness.client.put(url, json=body, headers=key)
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == "steps.0.skill.inputs.hostname"
