"""Before every analysis the engine records the organization's active facts as one evidence item, whatever the
playbook says: the expired, the revoked and another organization's facts are never in it."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from sqlalchemy import update

from tests.support.harness import Harness
from vigil.evidence.facts import ORG_FACTS_SKILL_ID, FactKind, OrgFacts
from vigil.facts.models import OrganizationFact

DAY = 24 * 3600


def _fact(harness: Harness, key: str, code: str, **body: Any) -> dict[str, Any]:
    payload = {"reason": "Told us in the onboarding call", "owner": "alice@acme.example"}
    payload["expires_at"] = int(time.time()) + 30 * DAY
    response = harness.client.post(
        f"/serviceapi/organizations/{code}/facts", json=payload | body, headers={"Authorization": f"Bearer {key}"}
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_the_investigation_records_the_active_facts_before_the_analysis(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    harness.add_org("BETA")
    key = harness.add_key().api_key
    scanner = _fact(harness, key, "ACME", kind="authorised_scanner", value="198.51.100.7")
    account = _fact(harness, key, "ACME", kind="service_account", value="svc-backup@acme.example")
    lapsed = _fact(harness, key, "ACME", kind="vpn_egress", value="192.0.2.0/24")
    revoked = _fact(harness, key, "ACME", kind="approved_tool", value="AnyDesk")
    _fact(harness, key, "BETA", kind="office_network", value="203.0.113.0/24")
    with harness.db.write() as session:
        session.execute(
            update(OrganizationFact)
            .where(OrganizationFact.fact_uuid == uuid.UUID(lapsed["fact_uuid"]))
            .values(expires_at=int(time.time()) - DAY)
        )
    headers = {"Authorization": f"Bearer {key}"}
    harness.client.delete(f"/serviceapi/organizations/ACME/facts/{revoked['fact_uuid']}", headers=headers)

    content = {"userPrincipalName": "jane@acme.example", "ipAddress": "198.51.100.7", "result": "success"}
    body = harness.alert_body(provider="okta", alert_type="Suspicious sign-in", alert_content=json.dumps(content))
    alert = harness.post_alert(key, body).json()
    harness.wait_for(key, lambda alerts: alerts and all(a["investigation_status"] in (15, 20) for a in alerts))
    done = harness.client.get(f"/serviceapi/alerts/{alert['alert_id']}", headers=headers).json()
    assert done["investigation_status"] == 15, done
    case = harness.client.get(f"/serviceapi/cases/{done['case_id']}", headers=headers).json()

    items = [item for item in case["evidence"] if item["skill_id"] == ORG_FACTS_SKILL_ID]
    assert len(items) == 1 and items[0]["status"] == "ok"
    assert case["evidence"][0] == items[0], "the organization's context comes ahead of the playbook's steps"
    facts = OrgFacts.from_output(items[0]["output"])
    assert {f.id for f in facts.facts} == {scanner["fact_uuid"], account["fact_uuid"]}
    assert facts.covering_ip("198.51.100.7", [FactKind.AUTHORISED_SCANNER]) is not None
    assert facts.account("SVC-BACKUP@acme.example", FactKind.SERVICE_ACCOUNT) is not None
    assert items[0]["output"]["omitted"] == 0
