"""Similar alert types share a playbook: a mapped type is investigated by it, only within its organization and
provider, and unmapping returns the type to a playbook of its own (PUT /serviceapi/playbooks/{uuid}/alert-types)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select

from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.investigations.models import InvestigationAttempt
from vigil.playbooks.schemas import AnalyzeStep, PlaybookDefinition

TYPE = "Impossible travel sign-in"
SIMILAR = "Impossible travel sign-in (beta rule)"


def _investigated_by(harness: Harness, key: str, org: str, provider: str) -> uuid.UUID:
    """Post one alert of the similar type and return the playbook its completed investigation was pinned to."""
    body = harness.alert_body(org=org, provider=provider, alert_type=SIMILAR)
    created = harness.post_alert(key, body)
    assert created.status_code == 201, created.text
    alert_uuid = created.json()["alert_uuid"]
    harness.wait_for(key, lambda alerts: any(a["alert_uuid"] == alert_uuid and a["completed_at"] for a in alerts))
    with harness.db.read() as session:
        pinned = session.scalar(
            select(InvestigationAttempt.playbook_uuid).where(InvestigationAttempt.alert_uuid == uuid.UUID(alert_uuid))
        )
    assert pinned is not None
    return pinned


def test_a_mapped_type_runs_the_shared_playbook_in_its_tenant_and_provider_only(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    harness.add_org("BETA")
    acme = harness.add_key("ACME").api_key
    beta = harness.add_key("BETA").api_key
    everyone = harness.add_key("ACME", "BETA").api_key
    shared = install_playbook(
        harness.db, "ACME", "okta", TYPE, PlaybookDefinition(steps=[AnalyzeStep(name="AI analysis")])
    )
    url = f"/serviceapi/playbooks/{shared}/alert-types"

    def put(alert_types: list[str], api_key: str = acme) -> Any:
        return harness.client.put(
            url, json={"alert_types": alert_types}, headers={"Authorization": f"Bearer {api_key}"}
        )

    assert put([SIMILAR], beta).status_code == 404  # another tenant's playbook is not found, not named
    own = put([TYPE])
    assert own.status_code == 422 and own.json()["error"]["code"] == "invalid_alert_type"
    assert put(["  "]).status_code == 422
    mapped = put([SIMILAR])
    assert mapped.status_code == 200 and mapped.json() == {"alert_types": [SIMILAR]}
    listed = harness.client.get(url, headers={"Authorization": f"Bearer {acme}"})
    assert listed.json() == {"alert_types": [SIMILAR]}

    other = install_playbook(harness.db, "ACME", "okta", "Other", PlaybookDefinition(steps=[AnalyzeStep(name="AI")]))
    taken = harness.client.put(
        f"/serviceapi/playbooks/{other}/alert-types",
        json={"alert_types": [SIMILAR]},
        headers={"Authorization": f"Bearer {acme}"},
    )
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "alert_type_mapped"

    assert _investigated_by(harness, everyone, "ACME", "okta") == shared
    # The mapping is the ACME okta playbook's: another tenant's or provider's alert of that type gets its own.
    beta_playbook = _investigated_by(harness, everyone, "BETA", "okta")
    cloudflare_playbook = _investigated_by(harness, everyone, "ACME", "cloudflare")
    assert len({shared, beta_playbook, cloudflare_playbook}) == 3

    assert put([]).json() == {"alert_types": []}
    restored = _investigated_by(harness, everyone, "ACME", "okta")
    assert restored not in (shared, beta_playbook, cloudflare_playbook)
    assert _investigated_by(harness, everyone, "ACME", "okta") == restored  # the type's own playbook, kept
