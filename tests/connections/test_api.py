"""Connections through /serviceapi against the vendor fakes: create, test, update, delete, catalog and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.connections.conftest import assert_error, auth, create
from tests.fakes.fixtures import CLOUDFLARE_KEY_VALUES, CLOUDFLARE_TOKEN_VALUES, MDE_VALUES, push_values, slack_values
from tests.support.harness import Harness
from vigil.integrations.cloudflare import fake as cf
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.push_security import fake as push
from vigil.integrations.push_security.fake import PushFake
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack.fake import SlackFake

Fakes = dict[str, Any]


@pytest.fixture
def fakes(mde_fake: MdeFake, cloudflare_fake: CloudflareFake, slack_fake: SlackFake, push_fake: PushFake) -> Fakes:
    return {"mde": mde_fake, "cloudflare": cloudflare_fake, "slack": slack_fake, "push": push_fake}


def _without_method(values: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in values.items() if k != "auth_method"}


# integration id, auth_method, field values given the fakes
WORKING: dict[str, tuple[str, str | None, Callable[[Fakes], dict[str, str]]]] = {
    "microsoft_defender": ("microsoft_defender", None, lambda f: dict(MDE_VALUES)),
    "cloudflare_api_token": ("cloudflare", "api_token", lambda f: _without_method(CLOUDFLARE_TOKEN_VALUES)),
    "cloudflare_global_key": ("cloudflare", "global_key", lambda f: _without_method(CLOUDFLARE_KEY_VALUES)),
    "slack": ("slack", None, lambda f: slack_values(f["slack"])),
    "push_security": ("push_security", None, lambda f: push_values(f["push"])),
}


def _create_working(api: Harness, key: str, fakes: Fakes, case: str, name: str = "main") -> dict[str, Any]:
    integration_id, method, values = WORKING[case]
    body: dict[str, Any] = {"integration_id": integration_id, "name": name, "fields": values(fakes)}
    if method:
        body["auth_method"] = method
    response = create(api, key, **body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


@pytest.mark.parametrize("case", list(WORKING))
def test_connection_created_through_the_api_tests_ok_against_its_fake(api: Harness, fakes: Fakes, case: str) -> None:
    key = api.add_key().api_key
    created = _create_working(api, key, fakes, case)
    assert created["organization_code"] == "ACME" and created["last_test_ok"] is None
    assert created["auth_method"] == WORKING[case][1]
    tested = api.client.post(f"/serviceapi/connections/{created['connection_uuid']}/test", json={}, headers=auth(key))
    assert tested.status_code == 200, tested.text
    result = tested.json()
    assert result["ok"] is True, result
    assert result["cause"] is None and result["remedy"] is None
    stored = api.client.get(f"/serviceapi/connections/{created['connection_uuid']}", headers=auth(key)).json()
    assert stored["last_test_ok"] is True and stored["last_test_at"] == result["tested_at"]


FAILING: list[tuple[str, str, str, str, str]] = [
    # case, field to break, wrong value, expected cause (prefix), fragment of the remedy
    ("microsoft_defender", "client_secret", "wrong-secret-value-123", "Invalid client secret", "Secret ID"),
    ("cloudflare_api_token", "api_token", "Zz" * 20, "Invalid API Token", "API token"),
    ("cloudflare_global_key", "global_api_key", "0" * 37, "Invalid API Key", "Global API Key"),
    ("slack", "bot_token", slack.REVOKED_TOKEN, "", ""),
    ("push_security", "api_key", push.EXPIRED_KEY, "", ""),
]


@pytest.mark.parametrize(("case", "field", "wrong", "cause", "remedy"), FAILING, ids=[f[0] for f in FAILING])
def test_documented_failure_shows_cause_and_remedy_through_the_api(
    api: Harness, fakes: Fakes, case: str, field: str, wrong: str, cause: str, remedy: str
) -> None:
    key = api.add_key().api_key
    created = _create_working(api, key, fakes, case)
    patched = api.client.patch(
        f"/serviceapi/connections/{created['connection_uuid']}", json={"fields": {field: wrong}}, headers=auth(key)
    )
    assert patched.status_code == 200, patched.text
    result = api.client.post(
        f"/serviceapi/connections/{created['connection_uuid']}/test", json={}, headers=auth(key)
    ).json()
    assert result["ok"] is False, result
    assert result["cause"] and result["remedy"], result
    assert result["cause"].startswith(cause) and remedy in result["remedy"], result
    assert wrong not in str(result)
    stored = api.client.get(f"/serviceapi/connections/{created['connection_uuid']}", headers=auth(key)).json()
    assert (stored["last_test_ok"], stored["last_test_cause"], stored["last_test_remedy"]) == (
        False,
        result["cause"],
        result["remedy"],
    )


def test_cloudflare_auth_methods_use_their_own_fields(api: Harness, cloudflare_fake: CloudflareFake) -> None:
    key = api.add_key().api_key
    token_only = create(api, key, integration_id="cloudflare", name="cf", fields=CLOUDFLARE_TOKEN_VALUES)
    assert token_only.status_code == 201, token_only.text
    assert token_only.json()["auth_method"] == "api_token", "auth_method may also be given as a field"
    assert token_only.json()["secret_fields"] == ["api_token"]
    mixed = create(
        api, key, integration_id="cloudflare", name="cf2", auth_method="api_token",
        fields={**_without_method(CLOUDFLARE_TOKEN_VALUES), "global_api_key": cf.GLOBAL_KEY},
    )  # fmt: skip
    error = assert_error(mixed, 422, "field_not_used_with_auth_method")
    assert error["details"][0]["field"] == "fields.global_api_key"
    missing_email = create(
        api, key, integration_id="cloudflare", name="cf3", auth_method="global_key",
        fields={"global_api_key": cf.GLOBAL_KEY, "account_id": cf.ACCOUNT_ID},
    )  # fmt: skip
    assert "fields.email" in [
        d["field"] for d in assert_error(missing_email, 422, "invalid_connection_fields")["details"]
    ]
    # Switching method keeps nothing of the old one and tests with the new headers.
    uuid_ = token_only.json()["connection_uuid"]
    switched = api.client.patch(
        f"/serviceapi/connections/{uuid_}",
        json={"auth_method": "global_key", "fields": {"email": cf.EMAIL, "global_api_key": cf.GLOBAL_KEY}},
        headers=auth(key),
    )
    assert switched.status_code == 200, switched.text
    assert switched.json()["secret_fields"] == ["global_api_key"] and switched.json()["auth_method"] == "global_key"
    assert api.client.post(f"/serviceapi/connections/{uuid_}/test", json={}, headers=auth(key)).json()["ok"] is True
    assert cloudflare_fake.requests[-1].headers["x-auth-email"] == cf.EMAIL
    bad = create(api, key, integration_id="cloudflare", name="cf4", auth_method="oauth", fields={})
    assert_error(bad, 422, "invalid_auth_method")
    not_offered = create(api, key, integration_id="push_security", name="p", auth_method="x", fields={"api_key": "k"})
    assert_error(not_offered, 422, "invalid_auth_method")


def test_validation_errors_use_the_one_error_shape(api: Harness) -> None:
    key = api.add_key().api_key
    missing = create(api, key, integration_id="microsoft_defender", name="m", fields={"tenant_id": mde.TENANT_ID})
    details = assert_error(missing, 422, "invalid_connection_fields")["details"]
    assert {d["field"] for d in details} == {"fields.client_id", "fields.client_secret"}
    wrong_format = create(
        api, key, integration_id="slack", name="s",
        fields={"webhook_url": "hooks.slack.com/x", "bot_token": "xoxp-user-token", "signing_secret": "abc"},
    )  # fmt: skip
    details = assert_error(wrong_format, 422, "invalid_connection_fields")["details"]
    assert {d["field"] for d in details} == {"fields.webhook_url", "fields.bot_token"}
    assert "xoxp-user-token" not in wrong_format.text, "problems never echo a (possibly secret) value"
    unknown_integration = create(api, key, integration_id="splunk", name="x", fields={})
    error = assert_error(unknown_integration, 422, "unknown_integration")
    assert error["details"][0]["field"] == "integration_id" and "/serviceapi/integrations" in error["message"]
    unknown_field = create(api, key, integration_id="push_security", name="p", fields={"api_key": "k", "nope": "1"})
    assert_error(unknown_field, 422, "unknown_connection_field")
    assert_error(
        create(api, key, organization_code="NOPE", integration_id="slack", name="x"), 422, "unknown_organization_code"
    )
    assert_error(create(api, key, integration_id="slack", name=""), 422, "validation_error")
    assert_error(create(api, key, integration_id="slack", name="x", colour="red"), 422, "validation_error")
    past = create(api, key, integration_id="push_security", name="p", fields={"api_key": "k"}, expires_at=1000)
    assert_error(past, 422, "invalid_expiry")


def test_duplicate_name_in_an_organization_is_a_conflict(api: Harness) -> None:
    key = api.add_key().api_key
    api.add_org("BETA")
    assert create(api, key, integration_id="push_security", name="push", fields={"api_key": "k1"}).status_code == 201
    duplicate = create(api, key, integration_id="slack", name="push", fields={})
    assert_error(duplicate, 409, "connection_name_exists")
    other_org = create(
        api, key, organization_code="BETA", integration_id="push_security", name="push", fields={"api_key": "k"}
    )
    assert other_org.status_code == 201, "names are unique per organization only"
    second = create(api, key, integration_id="push_security", name="push 2", fields={"api_key": "k2"}).json()
    rename = api.client.patch(
        f"/serviceapi/connections/{second['connection_uuid']}", json={"name": "push"}, headers=auth(key)
    )
    assert_error(rename, 409, "connection_name_exists")


def test_patch_keeps_omitted_secrets_and_replaces_given_ones(api: Harness, push_fake: PushFake) -> None:
    key = api.add_key().api_key
    created = create(api, key, integration_id="push_security", name="p", fields=push_values(push_fake)).json()
    url = f"/serviceapi/connections/{created['connection_uuid']}"
    assert created["fields"]["api_key"] == "••••" + push.READ_KEY[-4:]
    kept = api.client.patch(url, json={"description": "Push prod", "fields": {"api_key": ""}}, headers=auth(key)).json()
    assert kept["description"] == "Push prod" and kept["fields"]["api_key"] == created["fields"]["api_key"]
    assert api.client.post(url + "/test", json={}, headers=auth(key)).json()["ok"] is True
    replaced = api.client.patch(url, json={"fields": {"api_key": push.FULL_KEY}}, headers=auth(key)).json()
    assert replaced["fields"]["api_key"] == "••••" + push.FULL_KEY[-4:]
    assert push_fake.requests[-1].headers["x-api-key"] == push.READ_KEY
    assert api.client.post(url + "/test", json={}, headers=auth(key)).json()["ok"] is True
    assert push_fake.requests[-1].headers["x-api-key"] == push.FULL_KEY
    cleared = api.client.patch(url, json={"fields": {"api_key": None}}, headers=auth(key))
    assert_error(cleared, 422, "invalid_connection_fields")
    expiry = api.client.patch(url, json={"expires_at": 4_000_000_000}, headers=auth(key)).json()
    assert expiry["expires_at"] == 4_000_000_000 and expiry["expired"] is False
    assert api.client.patch(url, json={"expires_at": None}, headers=auth(key)).json()["expires_at"] is None


def test_delete_removes_the_connection(api: Harness) -> None:
    key = api.add_key().api_key
    created = create(api, key, integration_id="push_security", name="p", fields={"api_key": "k"}).json()
    url = f"/serviceapi/connections/{created['connection_uuid']}"
    assert api.client.delete(url, headers=auth(key)).status_code == 204
    assert_error(api.client.get(url, headers=auth(key)), 404, "connection_not_found")
    assert_error(api.client.delete(url, headers=auth(key)), 404, "connection_not_found")
    assert api.client.get("/serviceapi/connections", headers=auth(key)).json() == {"connections": []}


def test_webhook_token_is_unique_and_rotatable(api: Harness) -> None:
    key = api.add_key().api_key
    first = create(api, key, integration_id="push_security", name="a", fields={"api_key": "k"}).json()
    second = create(api, key, integration_id="push_security", name="b", fields={"api_key": "k"}).json()
    assert len(first["webhook_token"]) >= 40 and first["webhook_token"] != second["webhook_token"]
    rotated = api.client.post(
        f"/serviceapi/connections/{first['connection_uuid']}/webhook-token", json={}, headers=auth(key)
    )
    assert rotated.status_code == 200 and rotated.json()["webhook_token"] != first["webhook_token"]


def test_catalog_lists_every_integration_with_fields_and_skill_schemas(api: Harness) -> None:
    key = api.add_key().api_key
    assert_error(api.client.get("/serviceapi/integrations"), 401, "missing_api_key")
    catalog = api.client.get("/serviceapi/integrations", headers=auth(key)).json()["integrations"]
    by_id = {i["id"]: i for i in catalog}
    assert set(by_id) == {"microsoft_defender", "cloudflare", "slack", "push_security"}
    assert by_id["cloudflare"]["auth_method_field"] == "auth_method"
    assert {f["name"] for f in by_id["microsoft_defender"]["fields"]} == {"tenant_id", "client_id", "client_secret"}
    skill = next(s for s in by_id["cloudflare"]["skills"] if s["id"] == "cloudflare.get_edge_audit_logs")
    assert skill["name"] == "Get Edge Audit Logs"
    assert skill["input_schema"]["type"] == "object" and skill["output_schema"]["type"] == "object"
