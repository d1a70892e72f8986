"""Organization facts over the API: CRUD, validation per kind, expiry, the change record and tenant isolation."""

from __future__ import annotations

import time
import uuid
from typing import Any

from sqlalchemy import update

from tests.support.harness import Harness
from vigil.facts.models import OrganizationFact

DAY = 24 * 3600


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _scanner(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "kind": "authorised_scanner",
        "value": "198.51.100.7",
        "scope": "weekly external scan",
        "reason": "Contracted external vulnerability scanner",
        "owner": "Alice@Acme.example",
        "expires_at": int(time.time()) + 90 * DAY,
    }
    return body | overrides


def _error(response: Any, status: int, code: str, field: str | None = None) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    if field is not None:
        assert any(d.get("field") == field for d in body["error"]["details"]), body


def _facts(harness: Harness, key: str, code: str = "ACME", **params: Any) -> Any:
    return harness.client.get(f"/serviceapi/organizations/{code}/facts", params=params, headers=_auth(key))


def _post(harness: Harness, key: str, body: dict[str, Any], code: str = "ACME") -> Any:
    return harness.client.post(f"/serviceapi/organizations/{code}/facts", json=body, headers=_auth(key))


def test_a_fact_is_created_read_changed_and_revoked_with_every_change_recorded(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME", name="siem").api_key

    created = _post(harness, key, _scanner(value=" 198.51.100.0/28 "))
    assert created.status_code == 201, created.text
    fact = created.json()
    assert fact["value"] == "198.51.100.0/28" and fact["owner"] == "alice@acme.example"
    assert fact["status"] == "active" and fact["created_by"] == "api_key:siem" and fact["organization_code"] == "ACME"
    assert [e["action"] for e in fact["history"]] == ["created"]
    url = f"/serviceapi/organizations/acme/facts/{fact['fact_uuid']}"

    renewed = int(time.time()) + 200 * DAY
    patched = harness.client.patch(url, json={"expires_at": renewed, "scope": None}, headers=_auth(key))
    assert patched.status_code == 200, patched.text
    assert patched.json()["expires_at"] == renewed and patched.json()["scope"] is None
    changes = {(e["field"], e["to_value"]) for e in patched.json()["history"] if e["action"] == "changed"}
    assert changes == {("expires_at", str(renewed)), ("scope", None)}
    assert all(e["actor"] == "api_key:siem" and e["at"] > 0 for e in patched.json()["history"])

    _error(harness.client.patch(url, json={"value": "10.0.0.1"}, headers=_auth(key)), 422, "validation_error")
    _error(harness.client.patch(url, json={"reason": None}, headers=_auth(key)), 422, "invalid_reason", "reason")

    revoked = harness.client.delete(url, headers=_auth(key))
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    again = harness.client.delete(url, headers=_auth(key))
    assert again.json()["revoked_at"] == revoked.json()["revoked_at"]  # a retry is harmless
    assert [e["action"] for e in again.json()["history"]][-1] == "revoked"
    assert sum(e["action"] == "revoked" for e in again.json()["history"]) == 1
    _error(harness.client.patch(url, json={"reason": "x"}, headers=_auth(key)), 409, "fact_revoked")
    assert harness.client.get(url, headers=_auth(key)).json()["status"] == "revoked"


def test_values_are_validated_per_kind(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    refused = {
        "not an address": (_scanner(value="scanner.acme.example"), "invalid_fact_value", "value"),
        "host bits": (_scanner(kind="vpn_egress", value="10.1.2.3/24"), "invalid_fact_value", "value"),
        "too broad": (_scanner(kind="office_network", value="0.0.0.0/0"), "fact_range_too_broad", "value"),
        "blank tool": (_scanner(kind="approved_tool", value="   "), "invalid_fact_value", "value"),
        "spaced account": (_scanner(kind="service_account", value="svc backup"), "invalid_fact_value", "value"),
        "owner": (_scanner(owner="alice"), "invalid_owner", "owner"),
        "blank reason": (_scanner(reason=" "), "invalid_reason", "reason"),
        "expired": (_scanner(expires_at=int(time.time()) - 60), "invalid_expiry", "expires_at"),
        "three years": (_scanner(expires_at=int(time.time()) + 3 * 365 * DAY), "invalid_expiry", "expires_at"),
        "window on a scanner": (_scanner(window_start=1, window_end=2), "invalid_window", "window_start"),
        "window missing": (_scanner(kind="change_window", value="CHG-1"), "invalid_window", "window_start"),
        "window backwards": (
            _scanner(kind="change_window", value="CHG-1", window_start=2_000_000_000, window_end=1_999_999_000),
            "invalid_window",
            "window_end",
        ),
    }
    for name, (body, code, field) in refused.items():
        response = _post(harness, key, body)
        assert response.status_code == 422, name
        _error(response, 422, code, field)
    _error(_post(harness, key, _scanner(kind="allow_everything")), 422, "validation_error", "kind")
    _error(_post(harness, key, {k: v for k, v in _scanner().items() if k != "expires_at"}), 422, "validation_error")
    assert _facts(harness, key).json() == {"facts": []}

    window = _post(
        harness,
        key,
        _scanner(kind="change_window", value="CHG-4711", window_start=1_900_000_000, window_end=1_900_007_200),
    )
    assert window.status_code == 201, window.text
    assert (window.json()["window_start"], window.json()["window_end"]) == (1_900_000_000, 1_900_007_200)
    ipv6 = _post(harness, key, _scanner(kind="ci_network", value="2001:DB8::/48"))
    assert ipv6.json()["value"] == "2001:db8::/48"


def test_expired_facts_are_listed_as_expired_and_filtered(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    live = _post(harness, key, _scanner()).json()
    lapsed = _post(harness, key, _scanner(kind="service_account", value="svc-backup@acme.example")).json()
    with harness.db.write() as session:  # facts cannot be created expired; age one
        session.execute(
            update(OrganizationFact)
            .where(OrganizationFact.fact_uuid == uuid.UUID(lapsed["fact_uuid"]))
            .values(expires_at=int(time.time()) - DAY)
        )
    listed = {f["fact_uuid"]: f["status"] for f in _facts(harness, key).json()["facts"]}
    assert listed == {live["fact_uuid"]: "active", lapsed["fact_uuid"]: "expired"}
    assert [f["fact_uuid"] for f in _facts(harness, key, active="true").json()["facts"]] == [live["fact_uuid"]]
    assert [f["fact_uuid"] for f in _facts(harness, key, active="false").json()["facts"]] == [lapsed["fact_uuid"]]
    by_kind = _facts(harness, key, kind="service_account").json()["facts"]
    assert [f["fact_uuid"] for f in by_kind] == [lapsed["fact_uuid"]]


def test_a_past_expiry_by_patch_ends_the_fact(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    fact = _post(harness, key, _scanner()).json()
    url = f"/serviceapi/organizations/ACME/facts/{fact['fact_uuid']}"
    ended = harness.client.patch(url, json={"expires_at": int(time.time()) - 60}, headers=_auth(key))
    assert ended.status_code == 200 and ended.json()["status"] == "expired"


def test_another_organizations_key_cannot_see_or_touch_its_facts(harness: Harness) -> None:
    harness.add_org("ACME")
    harness.add_org("BETA")
    acme = harness.add_key("ACME").api_key
    beta = harness.add_key("BETA").api_key
    operator = harness.add_key().api_key
    fact = _post(harness, acme, _scanner()).json()
    acme_url = f"/serviceapi/organizations/ACME/facts/{fact['fact_uuid']}"
    beta_url = f"/serviceapi/organizations/BETA/facts/{fact['fact_uuid']}"

    _error(_facts(harness, beta, "ACME"), 403, "organization_forbidden")
    _error(_post(harness, beta, _scanner(), "ACME"), 403, "organization_forbidden")
    _error(harness.client.get(acme_url, headers=_auth(beta)), 403, "organization_forbidden")
    _error(harness.client.patch(acme_url, json={"reason": "x"}, headers=_auth(beta)), 403, "organization_forbidden")
    _error(harness.client.delete(acme_url, headers=_auth(beta)), 403, "organization_forbidden")
    # Through its own organization's path, the other tenant's fact does not exist.
    _error(harness.client.get(beta_url, headers=_auth(beta)), 404, "fact_not_found")
    _error(harness.client.delete(beta_url, headers=_auth(beta)), 404, "fact_not_found")
    _error(harness.client.get(beta_url, headers=_auth(operator)), 404, "fact_not_found")
    # A code that does not exist: 403 for a restricted key (no probing), 422 for an operator key, as elsewhere.
    _error(_facts(harness, beta, "NOPE"), 403, "organization_forbidden")
    _error(_facts(harness, operator, "NOPE"), 422, "unknown_organization_code")
    assert _facts(harness, beta, "BETA").json() == {"facts": []}
    assert harness.client.get(acme_url, headers=_auth(acme)).json()["status"] == "active"
    _error(harness.client.get(acme_url, headers=_auth("vgl_live_not-a-key")), 401, "invalid_api_key")


def test_the_facts_endpoints_are_in_the_openapi_with_descriptions(harness: Harness) -> None:
    paths = harness.client.get("/openapi.json").json()["paths"]
    listing = paths["/serviceapi/organizations/{organization_code}/facts"]
    one = paths["/serviceapi/organizations/{organization_code}/facts/{fact_uuid}"]
    assert set(listing) == {"get", "post"} and set(one) == {"get", "patch", "delete"}
    for operation in (*listing.values(), *one.values()):
        assert operation["summary"] and "422" in operation["responses"]
    assert "expires_at" in listing["post"]["description"]
