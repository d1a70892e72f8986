"""Listing, filtering, pagination, lookups and tenant isolation (E2, E3 and alert queries)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.support.harness import Harness


def get(harness: Harness, key: str, path: str, **params: Any) -> Any:
    return harness.client.get(path, params=params, headers={"Authorization": f"Bearer {key}"})


@pytest.fixture
def tenants(harness: Harness) -> dict[str, str]:
    for code in ("ACME", "BETA"):
        harness.add_org(code, f"{code.title()} Inc")
    return {
        "all": harness.add_key(name="operator").api_key,
        "acme": harness.add_key("ACME", name="acme").api_key,
        "beta": harness.add_key("BETA", name="beta").api_key,
    }


def test_organizations_lists_only_those_the_key_may_use(harness: Harness, tenants: dict[str, str]) -> None:
    acme = get(harness, tenants["acme"], "/serviceapi/organizations").json()
    assert [o["organization_code"] for o in acme["organizations"]] == ["ACME"]
    assert set(acme["organizations"][0]) == {"organization_code", "organization_uuid", "name"}
    everything = get(harness, tenants["all"], "/serviceapi/organizations").json()
    assert [o["organization_code"] for o in everything["organizations"]] == ["ACME", "BETA"]


def test_providers_lists_seeded_providers(harness: Harness, tenants: dict[str, str]) -> None:
    providers = get(harness, tenants["acme"], "/serviceapi/providers").json()["providers"]
    slugs = {p["alert_provider"] for p in providers}
    assert {"microsoft_defender", "cloudflare", "push_security", "aws", "okta"} <= slugs
    assert all(set(p) == {"alert_provider", "name"} for p in providers)


def test_list_is_newest_first_with_cursor_pagination(harness: Harness, tenants: dict[str, str]) -> None:
    for n in range(7):
        harness.post_alert(tenants["acme"], harness.alert_body(alert_content=f"event {n}"))
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = get(harness, tenants["acme"], "/serviceapi/alerts", **params).json()
        seen += [a["alert_id"] for a in page["alerts"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"ACME-CLOUDFLARE-{n}" for n in range(7, 0, -1)]


def test_list_filters(harness: Harness, tenants: dict[str, str]) -> None:
    key = tenants["all"]
    harness.post_alert(key, harness.alert_body(alert_content="login from 198.51.100.4", alert_type="Sign-in"))
    harness.post_alert(key, harness.alert_body(provider="okta", alert_type="MFA reset"))
    harness.post_alert(key, harness.alert_body(org="BETA", alert_content="100% match_here"))

    def ids(**params: Any) -> list[str]:
        return [a["alert_id"] for a in get(harness, key, "/serviceapi/alerts", **params).json()["alerts"]]

    assert ids(organization_code="BETA") == ["BETA-CLOUDFLARE-1"]
    assert ids(alert_provider="okta") == ["ACME-OKTA-1"]
    assert ids(alert_type="Sign-in") == ["ACME-CLOUDFLARE-1"]
    assert ids(q="198.51.100") == ["ACME-CLOUDFLARE-1"]
    assert ids(q="100%") == ["BETA-CLOUDFLARE-1"], "LIKE wildcards are matched literally"
    assert ids(q="0_m") == [], "underscore is not a wildcard"
    assert len(ids(investigation_status=0)) == 3
    assert ids(investigation_status=15) == []
    assert len(ids(created_after=0)) == 3
    assert ids(created_before=1) == []


def test_list_rejects_bad_cursor_and_status(harness: Harness, tenants: dict[str, str]) -> None:
    bad_cursor = get(harness, tenants["acme"], "/serviceapi/alerts", cursor="garbage!")
    assert bad_cursor.status_code == 422
    assert bad_cursor.json()["error"]["code"] == "invalid_cursor"
    bad_status = get(harness, tenants["acme"], "/serviceapi/alerts", investigation_status=7)
    assert bad_status.status_code == 422


def test_restricted_key_never_sees_other_tenants_alerts(harness: Harness, tenants: dict[str, str]) -> None:
    beta_alert = harness.post_alert(tenants["beta"], harness.alert_body(org="BETA")).json()
    harness.post_alert(tenants["acme"])
    listed = get(harness, tenants["acme"], "/serviceapi/alerts").json()["alerts"]
    assert [a["organization_code"] for a in listed] == ["ACME"]
    # An alert_id names BETA by code (SPEC §2: 403); a bare uuid of another tenant's alert is simply not found.
    for ref, status, code in (
        (beta_alert["alert_id"], 403, "organization_forbidden"),
        (beta_alert["alert_uuid"], 404, "alert_not_found"),
    ):
        response = get(harness, tenants["acme"], f"/serviceapi/alerts/{ref}")
        assert response.status_code == status
        assert response.json()["error"]["code"] == code
    filtered = get(harness, tenants["acme"], "/serviceapi/alerts", organization_code="BETA")
    assert filtered.status_code == 403


def test_get_alert_by_id_or_uuid_includes_timeline(harness: Harness, tenants: dict[str, str]) -> None:
    created = harness.post_alert(tenants["acme"]).json()
    by_id = get(harness, tenants["acme"], f"/serviceapi/alerts/{created['alert_id'].lower()}").json()
    by_uuid = get(harness, tenants["acme"], f"/serviceapi/alerts/{created['alert_uuid']}").json()
    assert by_id == by_uuid
    assert {k: v for k, v in by_id.items() if k != "timeline"} == created
    assert by_id["timeline"][0]["kind"] == "created"
    assert by_id["timeline"][0]["to_status"] == 0
    assert by_id["timeline"][0]["actor"] == "api_key:acme"


def test_unknown_alert_is_404(harness: Harness, tenants: dict[str, str]) -> None:
    response = get(harness, tenants["acme"], "/serviceapi/alerts/ACME-CLOUDFLARE-99")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "alert_not_found"


def test_unknown_route_uses_the_error_shape(harness: Harness) -> None:
    response = harness.client.get("/serviceapi/nothing-here")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


# Hostile query and path input that once answered 500 (issue 14): a 422 naming the parameter, on both databases.


@pytest.mark.parametrize("name", ["created_after", "created_before"])
@pytest.mark.parametrize("value", [2**63, 2**70])
def test_time_filters_beyond_64_bits_are_422(harness: Harness, tenants: dict[str, str], name: str, value: int) -> None:
    response = get(harness, tenants["acme"], "/serviceapi/alerts", **{name: value})
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == f"query.{name}"


@pytest.mark.parametrize("path", ["/serviceapi/alerts", "/serviceapi/cases"])
def test_cursor_holding_an_id_beyond_64_bits_is_422(harness: Harness, tenants: dict[str, str], path: str) -> None:
    cursor = base64.urlsafe_b64encode(json.dumps({"before_id": 2**70}).encode()).decode().rstrip("=")
    response = get(harness, tenants["acme"], path, cursor=cursor)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_cursor"


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/serviceapi/alerts", {"q": "a\x00b"}, "query.q"),
        ("/serviceapi/alerts", {"organization_code": "AC\x00ME"}, "query.organization_code"),
        ("/serviceapi/cases", {"assignee": "a\x00@example.com"}, "query.assignee"),
        ("/serviceapi/alerts/ACME-CLOUDFLARE-1%00", {}, "path.alert_ref"),
        ("/serviceapi/cases/ACME-1%00", {}, "path.case_ref"),
        ("/serviceapi/organizations/AC%00ME", {}, "path.organization_code"),
    ],
)
def test_nul_in_a_query_or_path_parameter_is_422_naming_it(
    harness: Harness, tenants: dict[str, str], path: str, params: dict[str, str], field: str
) -> None:
    response = get(harness, tenants["all"], path, **params)
    assert response.status_code == 422
    assert response.json()["error"]["details"][0]["field"] == field
