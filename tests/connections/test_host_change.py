"""Where a connection's credentials may go: a new host or URL needs its secrets re-entered (API and console form),
entered URLs pass the outbound-URL policy, and values HTTP cannot carry are refused at input, naming the field."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from tests.connections.conftest import assert_error, auth, create
from tests.fakes.fixtures import push_values
from tests.support.console import ADMIN_EMAIL
from tests.support.harness import Harness
from tests.support.signin import sign_in
from vigil.integrations.models import Connection
from vigil.integrations.push_security.fake import PushFake
from vigil.integrations.secrets import SecretBox

OTHER_HOST = "http://localhost:9/v1"  # allow-listed for the tests (conftest), so only the secret rule applies


def _push(api: Harness, key: str, push_fake: PushFake) -> dict[str, Any]:
    created = create(api, key, integration_id="push_security", name="push", fields=push_values(push_fake))
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def _stored(api: Harness, connection_uuid: str) -> tuple[dict[str, str], dict[str, str]]:
    with api.db.read() as session:
        row = session.get(Connection, uuid.UUID(connection_uuid))
        assert row is not None
        return json.loads(row.plain_values), SecretBox.from_settings(api.settings).decrypt(row.secret_values)


def _patch(api: Harness, key: str, connection_uuid: str, **body: Any) -> Any:
    return api.client.patch(f"/serviceapi/connections/{connection_uuid}", json=body, headers=auth(key))


def test_changing_the_push_domain_without_the_api_key_is_refused(api: Harness, push_fake: PushFake) -> None:
    key = api.add_key().api_key
    connection = _push(api, key, push_fake)
    before = _stored(api, connection["connection_uuid"])

    for fields in ({"domain": OTHER_HOST}, {"domain": OTHER_HOST, "api_key": ""}, {"domain": None}):
        error = assert_error(
            _patch(api, key, connection["connection_uuid"], fields=fields), 422, "secret_required_for_host_change"
        )
        assert "API domain" in error["message"] and "API Key" in error["message"]
        assert {d["field"] for d in error["details"]} == {"fields.domain", "fields.api_key"}
    assert _stored(api, connection["connection_uuid"]) == before  # nothing changed

    moved = _patch(api, key, connection["connection_uuid"], fields={"domain": OTHER_HOST, "api_key": "psk_new_0123456"})
    assert moved.status_code == 200, moved.text
    assert _stored(api, connection["connection_uuid"]) == ({"domain": OTHER_HOST}, {"api_key": "psk_new_0123456"})


def test_changing_other_fields_keeps_the_stored_secret(api: Harness, push_fake: PushFake) -> None:
    key = api.add_key().api_key
    connection = _push(api, key, push_fake)
    same_domain = connection["fields"]["domain"]
    kept = _patch(api, key, connection["connection_uuid"], name="push 2", fields={"domain": same_domain + "/"})
    assert kept.status_code == 200, kept.text
    assert _stored(api, connection["connection_uuid"])[1] == {"api_key": push_values(push_fake)["api_key"]}
    tested = api.client.post(f"/serviceapi/connections/{connection['connection_uuid']}/test", headers=auth(key))
    assert tested.json()["ok"] is True, tested.text


@pytest.mark.parametrize(
    ("domain", "words"),
    [
        ("http://push.example.com", "must use https://"),
        ("169.254.169.254", "cloud metadata"),
        ("https://metadata.google.internal/v1", "cloud metadata"),
        ("10.0.0.8", "private address"),
        ("https://100.64.3.4", "CGNAT"),
    ],
)
def test_a_refused_destination_is_a_422_naming_the_field(
    api: Harness, push_fake: PushFake, domain: str, words: str
) -> None:
    key = api.add_key().api_key
    refused = create(
        api, key, integration_id="push_security", name="push", fields={"domain": domain, "api_key": "k" * 20}
    )
    error = assert_error(refused, 422, "destination_refused")
    assert error["details"][0]["field"] == "fields.domain" and words in error["details"][0]["message"]
    connection = _push(api, key, push_fake)
    patched = _patch(api, key, connection["connection_uuid"], fields={"domain": domain, "api_key": "k" * 20})
    assert assert_error(patched, 422, "destination_refused")["details"][0]["field"] == "fields.domain"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"api_key": "psk_clé_non_ascii_0123"}, "fields.api_key"),
        ({"api_key": "psk_with space\tand tab"}, "fields.api_key"),
        ({"domain": "api.push\x00security.com"}, "fields.domain"),
        ({"domain": "api.pushsecurity.com\r\nX-Injected: 1"}, "fields.domain"),
    ],
)
def test_values_http_cannot_carry_are_refused_at_input(
    api: Harness, push_fake: PushFake, fields: dict[str, str], field: str
) -> None:
    key = api.add_key().api_key
    values = {**push_values(push_fake), **fields}
    refused = create(api, key, integration_id="push_security", name="push", fields=values)
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert field in {d.get("field") for d in error["details"]}, error
    for value in fields.values():
        assert value not in refused.text


def test_console_form_refuses_a_new_domain_without_the_api_key(api: Harness, push_fake: PushFake) -> None:
    key = api.add_key().api_key
    connection = _push(api, key, push_fake)
    csrf = sign_in(api, ADMIN_EMAIL)
    path = f"/integrations/push_security/connections/{connection['connection_uuid']}/edit"
    form = {"csrf_token": csrf(path), "name": "push", "description": "", "expires": "", "field.api_key": ""}

    refused = api.client.post(path, data={**form, "field.domain": OTHER_HOST}, follow_redirects=False)
    assert refused.status_code == 422, refused.text
    assert "Changing API domain requires re-entering API Key" in refused.text
    assert _stored(api, connection["connection_uuid"])[0] == {"domain": push_values(push_fake)["domain"]}

    metadata = api.client.post(
        path, data={**form, "field.domain": "169.254.169.254", "field.api_key": "k" * 20}, follow_redirects=False
    )
    assert metadata.status_code == 422 and "cloud metadata" in metadata.text

    saved = api.client.post(
        path, data={**form, "field.domain": OTHER_HOST, "field.api_key": "psk_new_0123456"}, follow_redirects=False
    )
    assert saved.status_code == 303, saved.text
    assert _stored(api, connection["connection_uuid"]) == ({"domain": OTHER_HOST}, {"api_key": "psk_new_0123456"})
