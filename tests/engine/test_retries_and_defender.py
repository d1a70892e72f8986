"""Retries at both levels and a Defender investigation, against the loopback Defender fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import MDE_VALUES, vendor_urls
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.playbooks.schemas import AnalyzeStep, OnError, PlaybookDefinition, SkillStep

MACHINE_ID = mde.MACHINES[0]["id"]
ALERT_TYPE = "Ransomware behavior detected"

LIST_MACHINES = "microsoft_defender.list_machines"


def defender_alert() -> str:
    """A Defender for Endpoint alert as its API and SIEM connector deliver it."""
    return json.dumps(
        {
            "id": "da637292082891366787_322129080",
            "incidentId": 12045,
            "severity": "High",
            "status": "New",
            "title": "Ransomware behavior detected in the file system",
            "category": "Ransomware",
            "machineId": MACHINE_ID,
            "computerDnsName": mde.MACHINES[0]["computerDnsName"],
            "evidence": [
                {
                    "entityType": "File",
                    "sha256": "8d2e6a1bc9f0a4a2f1b4c3e5d6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5",
                    "fileName": "invoice_scan.exe",
                    "userPrincipalName": "jane.doe@contoso.com",
                }
            ],
        }
    )


@pytest.fixture
def defender_harness(
    db_url: str, tmp_path: Path, mde_fake: MdeFake, request: pytest.FixtureRequest
) -> Iterator[Harness]:
    overrides: dict[str, Any] = getattr(request, "param", {})
    settings = engine_settings(db_url, tmp_path, vendor_urls=vendor_urls(mde=mde_fake.url), **overrides)
    with Harness(settings, engine=True) as harness:
        harness.add_org("ACME")
        yield harness


def connect_defender(harness: Harness, key: str, **fields: str) -> None:
    response = harness.client.post(
        "/serviceapi/connections",
        json={
            "organization_code": "ACME",
            "integration_id": "microsoft_defender",
            "name": "defender-prod",
            "fields": {**MDE_VALUES, **fields},
        },
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201, response.text


def pin_playbook(harness: Harness, on_error: OnError) -> None:
    """Give the alert type a fixed one-skill playbook before its first alert arrives."""
    definition = PlaybookDefinition(
        steps=[
            SkillStep(
                name="Machine details",
                skill="List Machines",
                inputs={"machine_id": "{{ entities.device_ids[0] }}"},
                on_error=on_error,
            ),
            AnalyzeStep(name="Verdict"),
        ]
    )
    install_playbook(harness.db, "ACME", "microsoft_defender", ALERT_TYPE, definition)


def post_and_wait(harness: Harness, key: str) -> dict[str, Any]:
    body = harness.alert_body(provider="microsoft_defender", alert_type=ALERT_TYPE, alert_content=defender_alert())
    alert_id = harness.post_alert(key, body).json()["alert_id"]
    alerts = harness.wait_for(key, lambda a: a and a[0]["investigation_status"] in (15, 20))
    assert alerts[0]["alert_id"] == alert_id
    detail: dict[str, Any] = harness.client.get(
        f"/serviceapi/alerts/{alert_id}", headers={"Authorization": f"Bearer {key}"}
    ).json()
    return detail


def evidence(harness: Harness, key: str, case_id: str) -> list[dict[str, Any]]:
    case = harness.client.get(f"/serviceapi/cases/{case_id}", headers={"Authorization": f"Bearer {key}"}).json()
    steps: list[dict[str, Any]] = case["evidence"]
    return steps


def test_transient_skill_failures_are_retried_inside_the_step(defender_harness: Harness, mde_fake: MdeFake) -> None:
    key = defender_harness.add_key("ACME").api_key
    connect_defender(defender_harness, key)
    pin_playbook(defender_harness, OnError.FAIL)
    mde_fake.fail_next(2, status=500, body={"error": {"code": "InternalError"}}, path_contains="/api/machines")
    alert = post_and_wait(defender_harness, key)
    assert alert["investigation_status"] == 15
    assert alert["investigation_retry_count"] == 0
    # The engine's own "Organization facts" record comes first; the playbook's first step follows.
    machine_step = next(e for e in evidence(defender_harness, key, alert["case_id"]) if e["name"] == "Machine details")
    assert machine_step["status"] == "ok"
    assert machine_step["inputs"] == {"machine_id": MACHINE_ID}
    assert len(mde_fake.requests_to("/api/machines")) == 3


@pytest.mark.parametrize("defender_harness", [{"skill_retry_attempts": 1}], indirect=True)
def test_attempt_failing_transiently_is_rerun_automatically(defender_harness: Harness, mde_fake: MdeFake) -> None:
    key = defender_harness.add_key("ACME").api_key
    connect_defender(defender_harness, key)
    pin_playbook(defender_harness, OnError.FAIL)
    mde_fake.fail_next(3, status=503, body={"error": {"code": "ServiceUnavailable"}}, path_contains="/api/machines")
    alert = defender_harness_wait_completed(defender_harness, key)
    assert alert["investigation_retry_count"] == 1
    kinds = [(e["from_status"], e["to_status"]) for e in alert["timeline"] if e["kind"] == "status"]
    assert kinds == [(0, 5), (5, 10), (10, 20), (20, 5), (5, 10), (10, 15)]


def defender_harness_wait_completed(harness: Harness, key: str) -> dict[str, Any]:
    body = harness.alert_body(provider="microsoft_defender", alert_type=ALERT_TYPE, alert_content=defender_alert())
    alert_id = harness.post_alert(key, body).json()["alert_id"]
    harness.wait_for(key, lambda a: a and a[0]["investigation_status"] == 15)
    detail: dict[str, Any] = harness.client.get(
        f"/serviceapi/alerts/{alert_id}", headers={"Authorization": f"Bearer {key}"}
    ).json()
    return detail


def test_permanent_failure_stays_failed_until_retried(defender_harness: Harness, mde_fake: MdeFake) -> None:
    key = defender_harness.add_key("ACME").api_key
    connect_defender(defender_harness, key)
    pin_playbook(defender_harness, OnError.FAIL)
    mde_fake.fail_next(
        1, status=403, body={"error": {"code": "Forbidden", "message": "Missing role"}}, path_contains="/api/machines"
    )
    failed = post_and_wait(defender_harness, key)
    assert failed["investigation_status"] == 20
    assert failed["investigation_retry_count"] == 0
    assert "Machine details" in failed["failure_reason"]
    assert failed["case_id"] is None
    errors = [
        (sample.labels, sample.value)
        for family in text_string_to_metric_families(defender_harness.client.get("/metrics").text)
        for sample in family.samples
        if sample.name == "vigil_skill_call_errors"
    ]
    # The operator sees why, not only where: the 403 is a missing permission, by the connection test's own name.
    assert errors == [
        ({"integration": "microsoft_defender", "skill": LIST_MACHINES, "code": "insufficient_permissions"}, 1.0)
    ]
    headers = {"Authorization": f"Bearer {key}"}
    retried = defender_harness.client.post(f"/serviceapi/alerts/{failed['alert_id']}/retry", headers=headers)
    assert retried.status_code == 200
    assert retried.json()["investigation_status"] == 5
    assert retried.json()["investigation_retry_count"] == 1
    done = defender_harness.wait_for(key, lambda a: a[0]["investigation_status"] == 15)[0]
    assert done["investigation_retry_count"] == 1
    assert done["failure_reason"] is None
    again = defender_harness.client.post(f"/serviceapi/alerts/{failed['alert_id']}/retry", headers=headers)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "investigation_not_failed"


def test_defender_alert_is_investigated_with_defender_skills(defender_harness: Harness, mde_fake: MdeFake) -> None:
    key = defender_harness.add_key("ACME").api_key
    connect_defender(defender_harness, key)
    alert = post_and_wait(defender_harness, key)
    assert alert["investigation_status"] == 15
    steps = evidence(defender_harness, key, alert["case_id"])
    ran = {s["skill_id"]: s for s in steps if s["status"] == "ok" and s["skill_id"]}
    assert {LIST_MACHINES, "microsoft_defender.fetch_alerts"} <= set(ran), [
        (s["skill_id"], s["status"], s["error"]) for s in steps
    ]
    assert ran[LIST_MACHINES]["output"]["machines"][0]["id"] == MACHINE_ID
    assert mde_fake.requests_to("/oauth2/v2.0/token"), "the connection's credentials were used"


def test_a_playbook_saved_with_a_legacy_skill_name_stores_the_id_and_runs(
    defender_harness: Harness, mde_fake: MdeFake
) -> None:
    """Skill ids were display names before they were namespaced: an API client still sending one is understood."""
    key = defender_harness.add_key("ACME").api_key
    connect_defender(defender_harness, key)
    analyze_only = PlaybookDefinition(steps=[AnalyzeStep(name="Verdict")])
    playbook_uuid = install_playbook(defender_harness.db, "ACME", "microsoft_defender", ALERT_TYPE, analyze_only)
    legacy = {"kind": "skill", "name": "Machine details", "skill": "List Machines"}
    steps = [{**legacy, "inputs": {"machine_id": "{{ entities.device_ids[0] }}"}}, {"kind": "analyze", "name": "V"}]
    saved = defender_harness.client.put(
        f"/serviceapi/playbooks/{playbook_uuid}",
        json={"definition": {"steps": steps}, "note": "legacy id"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["definition"]["steps"][0]["skill"] == LIST_MACHINES

    alert = post_and_wait(defender_harness, key)
    assert alert["investigation_status"] == 15
    (machines,) = [s for s in evidence(defender_harness, key, alert["case_id"]) if s["name"] == "Machine details"]
    assert (machines["skill_id"], machines["status"]) == (LIST_MACHINES, "ok"), machines
    assert machines["output"]["machines"][0]["id"] == MACHINE_ID
