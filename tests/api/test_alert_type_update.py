"""PATCH /serviceapi/alerts/{ref}: an untyped alert gets its type once, moves Created → Submitted, is investigated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.engine.conftest import engine_settings
from tests.support.harness import Harness


def untyped_alert(harness: Harness, key: str, org: str = "ACME") -> dict[str, Any]:
    body = harness.alert_body(org=org, provider="okta")
    del body["alert_type"]
    response = harness.post_alert(key, body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    assert created["alert_type"] is None and created["investigation_status"] == 0
    return created


def patch(harness: Harness, key: str, ref: str, body: Any) -> Any:
    return harness.client.patch(f"/serviceapi/alerts/{ref}", json=body, headers={"Authorization": f"Bearer {key}"})


def test_setting_the_type_submits_the_alert_and_records_who(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME", name="siem").api_key
    alert = untyped_alert(harness, key)
    response = patch(harness, key, alert["alert_id"], {"alert_type": "  Impossible travel sign-in  "})
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["alert_type"] == "Impossible travel sign-in"
    assert updated["investigation_status"] == 5
    assert updated["modified_at"] >= alert["modified_at"]
    detail = harness.client.get(
        f"/serviceapi/alerts/{alert['alert_uuid']}", headers={"Authorization": f"Bearer {key}"}
    ).json()
    event = detail["timeline"][-1]
    assert (event["kind"], event["from_status"], event["to_status"], event["actor"]) == ("status", 0, 5, "api_key:siem")
    assert "Impossible travel sign-in" in event["message"]


def test_an_alert_that_has_a_type_is_409(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    typed = harness.post_alert(key, harness.alert_body()).json()
    response = patch(harness, key, typed["alert_id"], {"alert_type": "Something else"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "alert_type_already_set"
    untyped = untyped_alert(harness, key)
    assert patch(harness, key, untyped["alert_id"], {"alert_type": "First"}).status_code == 200
    second = patch(harness, key, untyped["alert_id"], {"alert_type": "Second"})
    assert second.status_code == 409
    detail = harness.client.get(
        f"/serviceapi/alerts/{untyped['alert_id']}", headers={"Authorization": f"Bearer {key}"}
    ).json()
    assert detail["alert_type"] == "First"


def test_invalid_types_are_422_and_change_nothing(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    alert = untyped_alert(harness, key)
    for body in ({"alert_type": ""}, {"alert_type": "   "}, {"alert_type": "t" * 257}, {}, {"alert_type": 5}):
        response = patch(harness, key, alert["alert_id"], body)
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["details"], body
    assert patch(harness, key, alert["alert_id"], {"alert_type": "t" * 256}).status_code == 200


def test_other_tenants_alerts_are_403_and_unknown_ones_404(harness: Harness) -> None:
    harness.add_org("ACME")
    harness.add_org("BETA")
    beta_alert = untyped_alert(harness, harness.add_key("BETA").api_key, org="BETA")
    acme_key = harness.add_key("ACME").api_key
    refused = patch(harness, acme_key, beta_alert["alert_id"], {"alert_type": "Mine now"})
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "organization_forbidden"
    assert patch(harness, acme_key, "ACME-OKTA-999", {"alert_type": "x"}).status_code == 404
    assert (
        harness.client.patch(f"/serviceapi/alerts/{beta_alert['alert_id']}", json={"alert_type": "x"}).status_code
        == 401
    )


def test_typed_alert_is_investigated_to_completion(db_url: str, tmp_path: Path) -> None:
    with Harness(engine_settings(db_url, tmp_path), engine=True) as harness:
        harness.add_org("ACME")
        key = harness.add_key("ACME").api_key
        body = harness.alert_body(provider="okta", alert_content=json.dumps({"userPrincipalName": "u@acme.example"}))
        del body["alert_type"]
        alert = harness.post_alert(key, body).json()
        assert patch(harness, key, alert["alert_id"], {"alert_type": "Suspicious sign-in"}).status_code == 200
        done = harness.wait_for(key, lambda alerts: alerts and alerts[0]["investigation_status"] in (15, 20))[0]
        assert done["investigation_status"] == 15
        assert done["case_id"] == "ACME-1"
        assert done["investigator"].startswith("ACME okta - Suspicious sign-in - AI Generated ")
