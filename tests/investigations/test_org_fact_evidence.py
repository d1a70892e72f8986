"""What the engine's organization-facts step records: every active fact up to a cap, the ones about the alert's
addresses and accounts first when there are more; and the facts a closing disposition other than the AI's offers."""

from __future__ import annotations

import time
import uuid

from tests.support.harness import Harness
from vigil.auth.schemas import Principal
from vigil.core.entities import Entities
from vigil.evidence.facts import FactKind
from vigil.facts import service
from vigil.facts.schemas import FactCreate
from vigil.facts.suggestions import FactSuggestion, suggest_facts
from vigil.orgs.service import get_organization

OPERATOR = Principal(actor_uuid=uuid.UUID(int=0), name="test", all_organizations=True, organization_uuids=frozenset())


def test_beyond_the_cap_the_facts_about_the_alert_come_first(harness: Harness) -> None:
    harness.add_org("ACME")
    expires = int(time.time()) + 86400
    with harness.db.write() as session:
        for n in range(service.MAX_FACTS_IN_EVIDENCE + 5):
            payload = FactCreate(
                kind=FactKind.OFFICE_NETWORK,
                value=f"10.{n // 256}.{n % 256}.0/24",
                reason="Branch office",
                owner="net@acme.example",
                expires_at=expires,
            )
            service.create_fact(session, OPERATOR, "ACME", payload, actor="test")
        for kind, value in (
            (FactKind.AUTHORISED_SCANNER, "203.0.113.0/28"),
            (FactKind.VIP_ACCOUNT, "ceo@acme.example"),
        ):
            payload = FactCreate(kind=kind, value=value, reason="r", owner="it@acme.example", expires_at=expires)
            service.create_fact(session, OPERATOR, "ACME", payload, actor="test")
        organization_uuid = get_organization(session, "ACME").organization_uuid
        entities = Entities(ips=["203.0.113.5"], emails=["CEO@acme.example"])
        output = service.analysis_evidence(session, organization_uuid, entities)
    values = [fact["value"] for fact in output["facts"]]
    assert len(values) == service.MAX_FACTS_IN_EVIDENCE and output["omitted"] == 7
    assert set(values[:2]) == {"203.0.113.0/28", "ceo@acme.example"}


def test_a_different_closing_disposition_offers_the_facts_that_would_explain_it() -> None:
    entities = Entities(
        ips=["198.51.100.4", "10.0.0.9"], users=["jdoe"], subjects={"ips": ["198.51.100.4"], "users": ["jdoe"]}
    )
    benign = suggest_facts(entities, disposition="false_positive", ai_disposition="true_positive")
    assert benign == [
        FactSuggestion(FactKind.AUTHORISED_SCANNER, "198.51.100.4"),
        FactSuggestion(FactKind.VPN_EGRESS, "198.51.100.4"),
        FactSuggestion(FactKind.OFFICE_NETWORK, "198.51.100.4"),
        FactSuggestion(FactKind.CI_NETWORK, "198.51.100.4"),
        FactSuggestion(FactKind.SERVICE_ACCOUNT, "jdoe"),
        FactSuggestion(FactKind.CHANGE_WINDOW, ""),
    ]
    real = suggest_facts(entities, disposition="true_positive", ai_disposition="benign_true_positive")
    assert real == [FactSuggestion(FactKind.VIP_ACCOUNT, "jdoe")]
    assert suggest_facts(entities, disposition="true_positive", ai_disposition="true_positive") == []
    assert suggest_facts(entities, disposition="false_positive", ai_disposition="pending") == []
