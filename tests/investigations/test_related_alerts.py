"""Look up related alerts: same organization, same subject, no private addresses alone, no noisy values.

Alerts go in through the real intake API (on SQLite and PostgreSQL); the skill runs against that database.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from sqlalchemy import update

from tests.investigations import samples
from tests.support.harness import Harness
from vigil.alerts.models import Alert
from vigil.core.entities import Entities, extract_entities
from vigil.db.base import epoch_now
from vigil.investigations.related import NOISY_MIN_ALERTS, WINDOW_SECONDS, related_alerts

MATCH_FIELDS = {"alert_id", "alert_type", "alert_provider", "created_at", "case_id", "disposition", "shared", "reason"}


@pytest.fixture
def key(harness: Harness) -> str:
    harness.add_org("ACME")
    harness.add_org("GLOBEX")
    return harness.add_key("ACME", "GLOBEX").api_key


def post(harness: Harness, key: str, content: str, *, org: str = "ACME", provider: str = "okta") -> dict[str, Any]:
    body = harness.alert_body(org=org, provider=provider, alert_type="Suspicious activity", alert_content=content)
    response = harness.post_alert(key, body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def related(harness: Harness, alert: dict[str, Any], entities: Entities | None = None) -> dict[str, Any]:
    with harness.db.read() as session:
        return related_alerts(
            session,
            uuid.UUID(alert["alert_uuid"]),
            entities if entities is not None else extract_entities(alert["alert_content"]),
        )


def sign_in(user: str, ip: str = "91.214.124.19") -> str:
    return json.dumps({"actor": {"alternateId": user}, "client": {"ipAddress": ip}})


def test_a_subject_match_is_returned_with_its_shared_values_and_reason(harness: Harness, key: str) -> None:
    earlier = post(harness, key, samples.OKTA_SIGNIN)
    post(harness, key, sign_in("someone.else@contoso.com", "45.155.205.233"))
    alert = post(harness, key, samples.OKTA_SIGNIN)

    result = related(harness, alert)

    assert set(result) == {"count", "alerts", "ignored_noisy"}
    assert result["count"] == 1
    [match] = result["alerts"]
    assert set(match) == MATCH_FIELDS
    assert match["alert_id"] == earlier["alert_id"]
    assert match["alert_provider"] == "okta"
    assert match["shared"] == {
        "users": ["alice.smith@contoso.com"],
        "emails": ["alice.smith@contoso.com"],
        "ips": ["91.214.124.19"],
    }
    assert match["reason"] == "same subject user alice.smith@contoso.com and IP 91.214.124.19"
    assert result["ignored_noisy"] == {}


def test_another_organizations_alert_with_the_same_subject_never_matches(harness: Harness, key: str) -> None:
    post(harness, key, samples.OKTA_SIGNIN, org="GLOBEX")
    alert = post(harness, key, samples.OKTA_SIGNIN)

    result = related(harness, alert)

    assert result["count"] == 0
    assert result["alerts"] == []


def test_a_comment_author_is_not_the_same_subject_as_a_user_who_signed_in(harness: Harness, key: str) -> None:
    # aaron.analyst commented on and is assigned the Defender alert; in the sign-in he is the one signing in.
    defender = post(harness, key, samples.DEFENDER_ALERT_TRIAGED, provider="microsoft_defender")
    analyst_sign_in = post(harness, key, sign_in("aaron.analyst@contoso.com", "45.155.205.233"))

    assert related(harness, defender)["count"] == 0
    assert related(harness, analyst_sign_in)["count"] == 0


def test_a_shared_dns_server_or_management_server_does_not_relate_alerts(harness: Harness, key: str) -> None:
    def event(host: str, user: str, remote: str) -> str:
        return json.dumps(
            {
                "hostname": host,
                "user": user,
                "dst_ip": remote,
                "dnsServer": "1.1.1.1",
                "managementServer": "epo-01.corp.contoso.com",
                "reportingHost": "collector-01.corp.contoso.com",
            }
        )

    post(harness, key, event("ws-0001", "alice", "45.155.205.233"), provider="custom")
    alert = post(harness, key, event("ws-0002", "bob", "185.220.101.47"), provider="custom")

    assert related(harness, alert)["count"] == 0


def test_a_private_address_alone_does_not_relate_but_counts_next_to_the_same_host(harness: Harness, key: str) -> None:
    other_site = post(harness, key, json.dumps({"hostname": "ws-0001", "src_ip": "10.20.3.44"}), provider="custom")
    same_machine = post(harness, key, json.dumps({"hostname": "ws-0142", "src_ip": "10.20.3.44"}), provider="custom")
    alert = post(harness, key, json.dumps({"hostname": "ws-0142", "src_ip": "10.20.3.44"}), provider="custom")

    result = related(harness, alert)

    assert [match["alert_id"] for match in result["alerts"]] == [same_machine["alert_id"]]
    assert other_site["alert_id"] not in {match["alert_id"] for match in result["alerts"]}
    assert result["alerts"][0]["shared"] == {"hosts": ["ws-0142"], "ips": ["10.20.3.44"]}
    assert result["alerts"][0]["reason"] == "same subject host ws-0142 and IP 10.20.3.44"


def test_a_noisy_value_is_ignored_and_reported(harness: Harness, key: str) -> None:
    # The office's egress address is the subject of every sign-in: it relates nothing.
    for n in range(NOISY_MIN_ALERTS + 1):
        post(harness, key, sign_in(f"user{n}@contoso.com"))
    bob_before = post(harness, key, sign_in("bob@contoso.com"))
    alert = post(harness, key, sign_in("bob@contoso.com"))

    result = related(harness, alert)

    assert result["count"] == 1
    [match] = result["alerts"]
    assert match["alert_id"] == bob_before["alert_id"]
    assert match["shared"] == {"users": ["bob@contoso.com"], "emails": ["bob@contoso.com"]}
    assert match["reason"] == "same subject user bob@contoso.com"
    assert result["ignored_noisy"] == {"ips": {"91.214.124.19": NOISY_MIN_ALERTS + 2}}


def test_a_value_shared_by_few_alerts_is_not_noise(harness: Harness, key: str) -> None:
    for n in range(NOISY_MIN_ALERTS - 2):
        post(harness, key, sign_in(f"user{n}@contoso.com"))
    alert = post(harness, key, sign_in("bob@contoso.com"))

    result = related(harness, alert)

    assert result["count"] == NOISY_MIN_ALERTS - 2
    assert all(match["reason"] == "same subject IP 91.214.124.19" for match in result["alerts"])
    assert result["ignored_noisy"] == {}


def test_alerts_outside_the_window_do_not_match(harness: Harness, key: str) -> None:
    old = post(harness, key, samples.OKTA_SIGNIN)
    with harness.db.write() as session:
        session.execute(
            update(Alert)
            .where(Alert.alert_id == old["alert_id"])
            .values(created_at=epoch_now() - WINDOW_SECONDS - 3600)
        )
    alert = post(harness, key, samples.OKTA_SIGNIN)

    assert related(harness, alert)["count"] == 0


def test_entities_recorded_without_roles_are_re_extracted(harness: Harness, key: str) -> None:
    earlier = post(harness, key, samples.OKTA_SIGNIN)
    alert = post(harness, key, samples.OKTA_SIGNIN)
    recorded = Entities.model_validate_json('{"ips": ["91.214.124.19"], "users": ["alice.smith@contoso.com"]}')

    result = related(harness, alert, recorded)

    assert [match["alert_id"] for match in result["alerts"]] == [earlier["alert_id"]]


def test_an_unknown_alert_has_no_related_alerts(harness: Harness) -> None:
    with harness.db.read() as session:
        result = related_alerts(session, uuid.uuid4(), extract_entities(samples.OKTA_SIGNIN))

    assert result == {"count": 0, "alerts": [], "ignored_noisy": {}}


def test_a_match_not_yet_concluded_has_no_disposition(harness: Harness, key: str) -> None:
    """The analyst counts a related alert in full only once its case says malicious (docs/analyst.md R1/R2)."""
    post(harness, key, sign_in("alice.smith@contoso.com"))
    mine = post(harness, key, sign_in("alice.smith@contoso.com"))

    assert related(harness, mine)["alerts"][0]["disposition"] is None
