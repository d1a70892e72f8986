"""An organization's own AI model over the API: GET /serviceapi/organizations/{code} and PUT …/{code}/ai-model.

Only a key for all organizations (operator staff, like a console admin) changes it; the key is write-only.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import pytest

from tests.support.harness import Harness
from vigil.ai.organization_model import KEY_FIELD, choice_for
from vigil.integrations.secrets import SecretBox
from vigil.orgs.models import Organization
from vigil.orgs.service import get_organization

LOCAL_MODEL = "openai-chat:llama3.1"
LOCAL_URL = "http://gpu.internal:8000/v1"


@pytest.fixture(autouse=True)
def _no_provider_keys_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDKs fall back to these; without them a model that needs a key and has none is refused."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _put(harness: Harness, key: str, body: dict[str, Any], code: str = "ACME") -> Any:
    return harness.client.put(f"/serviceapi/organizations/{code}/ai-model", json=body, headers=_auth(key))


def _get(harness: Harness, key: str, code: str = "ACME") -> Any:
    return harness.client.get(f"/serviceapi/organizations/{code}", headers=_auth(key))


def _stored(harness: Harness, code: str = "ACME") -> Organization:
    with harness.db.read() as session:
        organization = get_organization(session, code)
        session.expunge(organization)
        return organization


def _stored_key(harness: Harness, code: str = "ACME") -> str | None:
    token = _stored(harness, code).ai_api_key
    return None if token is None else SecretBox.from_settings(harness.settings).decrypt(token)[KEY_FIELD]


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    return body["error"]  # type: ignore[no-any-return]


def _secret() -> str:
    return f"sk-vigil-test-{uuid.uuid4().hex}"


def test_operator_key_sets_reads_and_clears_an_organization_model(harness: Harness) -> None:
    harness.add_org("ACME", "Acme Corp")
    harness.add_org("BETA")
    operator = harness.add_key().api_key
    secret = _secret()

    before = _get(harness, operator)
    assert before.status_code == 200, before.text
    assert before.json() == {
        "organization_code": "ACME",
        "organization_uuid": before.json()["organization_uuid"],
        "name": "Acme Corp",
        "ai_model": None,
        "ai_base_url": None,
        "ai_api_key_set": False,
        "effective_ai_model": "builtin",
    }

    saved = _put(harness, operator, {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL, "ai_api_key": secret})
    assert saved.status_code == 200, saved.text
    assert saved.json()["ai_model"] == LOCAL_MODEL and saved.json()["ai_base_url"] == LOCAL_URL
    assert saved.json()["ai_api_key_set"] is True and saved.json()["effective_ai_model"] == LOCAL_MODEL
    assert _get(harness, operator).json() == saved.json()
    assert _get(harness, operator, "BETA").json()["effective_ai_model"] == "builtin"

    # Stored encrypted; the engine's choice for ACME carries it, BETA keeps the service-wide model.
    stored = _stored(harness)
    assert stored.ai_api_key is not None and secret not in stored.ai_api_key
    assert _stored_key(harness) == secret
    box = SecretBox.from_settings(harness.settings)
    with harness.db.read() as session:
        acme = choice_for(session, stored.organization_uuid, harness.settings, box)
        beta = choice_for(session, _stored(harness, "BETA").organization_uuid, harness.settings, box)
    assert (acme.model, acme.base_url) == (LOCAL_MODEL, LOCAL_URL)
    assert acme.api_key is not None and acme.api_key.get_secret_value() == secret
    assert beta.model == "builtin" and beta.api_key is None

    cleared = _put(harness, operator, {"ai_model": None})
    assert cleared.status_code == 200, cleared.text
    assert cleared.json()["ai_model"] is None and cleared.json()["ai_base_url"] is None
    assert cleared.json()["ai_api_key_set"] is False and cleared.json()["effective_ai_model"] == "builtin"
    stored = _stored(harness)
    assert (stored.ai_model, stored.ai_base_url, stored.ai_api_key) == (None, None, None)


def test_omitted_key_is_kept_while_the_destination_stays_and_an_empty_one_removes_it(harness: Harness) -> None:
    harness.add_org("ACME")
    operator = harness.add_key().api_key
    secret = _secret()
    assert _put(harness, operator, {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL, "ai_api_key": secret}).is_success
    token = _stored(harness).ai_api_key

    # Omitted or null with the same model: kept as it was.
    for body in (
        {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL},
        {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL, "ai_api_key": None},
        {"ai_model": "openai-chat:qwen2.5", "ai_base_url": LOCAL_URL},  # another model on the same server
    ):
        kept = _put(harness, operator, body)
        assert kept.status_code == 200 and kept.json()["ai_api_key_set"] is True, (body, kept.text)
        assert _stored(harness).ai_api_key == token
    assert _stored(harness).ai_model == "openai-chat:qwen2.5"

    # A new server does not inherit the key entered for the old one.
    moved = _put(harness, operator, {"ai_model": LOCAL_MODEL, "ai_base_url": "http://other.internal:8000/v1"})
    assert moved.status_code == 200 and moved.json()["ai_api_key_set"] is False, moved.text
    assert _stored(harness).ai_api_key is None

    # A new key replaces the old; "" removes it.
    replacement = _secret()
    body = {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL, "ai_api_key": replacement}
    assert _put(harness, operator, body).json()["ai_api_key_set"] is True
    assert _stored_key(harness) == replacement
    removed = _put(harness, operator, {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL, "ai_api_key": ""})
    assert removed.status_code == 200 and removed.json()["ai_api_key_set"] is False, removed.text
    assert _stored(harness).ai_api_key is None

    # A hosted model with its own key; `builtin` keeps no URL or key.
    hosted = _put(harness, operator, {"ai_model": "anthropic:claude-sonnet-4-5", "ai_api_key": secret})
    assert hosted.status_code == 200 and hosted.json()["ai_base_url"] is None, hosted.text
    builtin = _put(harness, operator, {"ai_model": "builtin", "ai_base_url": LOCAL_URL, "ai_api_key": secret})
    assert builtin.status_code == 200, builtin.text
    assert builtin.json() | {"organization_uuid": None} == {
        "organization_code": "ACME",
        "organization_uuid": None,
        "name": "ACME",
        "ai_model": "builtin",
        "ai_base_url": None,
        "ai_api_key_set": False,
        "effective_ai_model": "builtin",
    }


def test_unsupported_model_or_bad_base_url_is_422_naming_the_field_and_changes_nothing(harness: Harness) -> None:
    harness.add_org("ACME")
    operator = harness.add_key().api_key
    secret = _secret()
    assert _put(harness, operator, {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL, "ai_api_key": secret}).is_success
    before = _stored(harness)

    for model in ("nonsense:some-model", "gpt-4o", "anthropic:claude-sonnet-4-5", "openai:gpt-4.1"):
        # Unknown provider, no provider, and hosted models with no key (and none in the environment).
        error = _error(_put(harness, operator, {"ai_model": model}), 422, "unsupported_ai_model")
        assert error["details"][0]["field"] == "ai_model", error
        assert model in error["message"]
    for url in ("ftp://gpu.internal/v1", "gpu.internal:8000", "http://", "http://user:pw@gpu.internal:8000/v1"):
        error = _error(_put(harness, operator, {"ai_model": LOCAL_MODEL, "ai_base_url": url}), 422, "invalid_base_url")
        assert error["details"] == [{"field": "ai_base_url"}], error
        assert "pw" not in error["message"]
    missing = _error(_put(harness, operator, {}), 422, "validation_error")
    assert [d["field"] for d in missing["details"]] == ["ai_model"]
    extra = _error(_put(harness, operator, {"ai_model": None, "api_key": "x"}), 422, "validation_error")
    assert [d["field"] for d in extra["details"]] == ["api_key"]
    too_long = _error(_put(harness, operator, {"ai_model": "x" * 201}), 422, "validation_error")
    assert [d["field"] for d in too_long["details"]] == ["ai_model"]

    after = _stored(harness)
    assert (after.ai_model, after.ai_base_url, after.ai_api_key) == (
        before.ai_model,
        before.ai_base_url,
        before.ai_api_key,
    )


def test_only_a_key_for_all_organizations_changes_it_and_tenants_stay_apart(harness: Harness) -> None:
    harness.add_org("ACME")
    harness.add_org("BETA")
    operator = harness.add_key(name="operator").api_key
    acme = harness.add_key("ACME", name="acme siem").api_key
    beta = harness.add_key("BETA", name="beta siem").api_key
    body = {"ai_model": LOCAL_MODEL, "ai_base_url": "http://attacker.example/v1"}

    # A tenant's key reads its own organization's model (never a key) but cannot change it.
    assert _get(harness, acme).status_code == 200
    refused = _error(_put(harness, acme, body), 403, "all_organizations_key_required")
    assert refused["details"] == [{"field": "organization_code", "value": "ACME"}]
    # Another tenant's key, or an unknown code, looks the same: 403, so codes cannot be probed.
    _error(_put(harness, beta, body), 403, "organization_forbidden")
    _error(_get(harness, beta), 403, "organization_forbidden")
    _error(_get(harness, acme, "NOSUCH"), 403, "organization_forbidden")
    _error(_put(harness, acme, body, "NOSUCH"), 403, "organization_forbidden")
    _error(harness.client.put("/serviceapi/organizations/ACME/ai-model", json=body), 401, "missing_api_key")
    assert _stored(harness).ai_model is None

    # The operator's key may; an unknown code is 404 for it.
    _error(_get(harness, operator, "NOSUCH"), 404, "organization_not_found")
    _error(_put(harness, operator, body, "NOSUCH"), 404, "organization_not_found")
    assert _put(harness, operator, body).status_code == 200
    assert _get(harness, acme).json()["effective_ai_model"] == LOCAL_MODEL
    assert _get(harness, operator, "BETA").json()["ai_model"] is None


def test_the_key_is_in_no_response_and_no_log_line(harness: Harness, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    harness.add_org("ACME")
    harness.add_org("BETA")
    operator = harness.add_key().api_key
    tenant = harness.add_key("ACME").api_key
    secret = _secret()
    with_key = {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL, "ai_api_key": secret}

    responses = [
        _put(harness, operator, with_key),
        _get(harness, operator),
        _get(harness, tenant),
        harness.client.get("/serviceapi/organizations", headers=_auth(operator)),
        _put(harness, operator, {"ai_model": LOCAL_MODEL, "ai_base_url": LOCAL_URL}),
        _put(harness, operator, {**with_key, "ai_model": "nonsense:model"}),
        _put(harness, operator, {**with_key, "ai_model": "anthropic:claude-sonnet-4-5", "ai_base_url": "ftp://x"}),
        _put(harness, operator, {**with_key, "ai_api_key": secret + "x" * 4096}),
        _put(harness, operator, {**with_key, "ai_api_key": 12345, "unexpected": secret}),
        _put(harness, tenant, with_key),
        _put(harness, operator, with_key, "BETA"),
    ]
    assert [r.status_code for r in responses] == [200, 200, 200, 200, 200, 422, 422, 422, 422, 403, 200]
    for response in responses:
        assert secret not in response.text, response.text
        assert 'ai_api_key":"' not in response.text.replace(" ", "")
    assert "organization AI model changed org=ACME" in caplog.text  # the change is logged ...
    assert secret not in caplog.text  # ... without the key
    for record in caplog.records:
        assert secret not in record.getMessage() and secret not in repr(record.args)
