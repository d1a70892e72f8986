"""Tenant isolation, expiry, and that no secret value leaves Vigil: responses, logs, database file."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import pytest
from sqlalchemy import update

from tests.connections.conftest import assert_error, auth, create
from tests.fakes.fixtures import CLOUDFLARE_KEY_VALUES, CLOUDFLARE_TOKEN_VALUES, MDE_VALUES, push_values, slack_values
from tests.support.harness import Harness
from vigil.auth.schemas import Principal
from vigil.integrations import service
from vigil.integrations.cloudflare import fake as cf
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.models import Connection
from vigil.integrations.push_security import fake as push
from vigil.integrations.push_security.fake import PushFake
from vigil.integrations.secrets import SecretBox
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack.fake import SlackFake

SECRETS = [
    mde.CLIENT_SECRET,
    cf.USER_TOKEN,
    cf.GLOBAL_KEY,
    slack.BOT_TOKEN,
    slack.SIGNING_SECRET,
    slack.WEBHOOK_PATH.rsplit("/", 1)[-1],
    push.READ_KEY,
]


def _connection_uuid(api: Harness, key: str, org: str, name: str, **fields: str) -> str:
    response = create(
        api, key, organization_code=org, integration_id="push_security", name=name, fields={"api_key": "k", **fields}
    )
    assert response.status_code == 201, response.text
    return str(response.json()["connection_uuid"])


def test_a_key_of_one_organization_cannot_touch_another_organizations_connections(api: Harness) -> None:
    api.add_org("BETA")
    admin = api.add_key().api_key
    beta_connection = _connection_uuid(api, admin, "BETA", "beta push")
    acme_connection = _connection_uuid(api, admin, "ACME", "acme push")
    acme_key = api.add_key("ACME").api_key
    url = f"/serviceapi/connections/{beta_connection}"
    # Another tenant's connection by id is not found, exactly like an unknown one (the answer names nothing of BETA).
    assert_error(api.client.get(url, headers=auth(acme_key)), 404, "connection_not_found")
    assert_error(api.client.post(url + "/test", json={}, headers=auth(acme_key)), 404, "connection_not_found")
    assert_error(api.client.patch(url, json={"name": "x"}, headers=auth(acme_key)), 404, "connection_not_found")
    assert_error(api.client.delete(url, headers=auth(acme_key)), 404, "connection_not_found")
    assert_error(api.client.post(url + "/webhook-token", json={}, headers=auth(acme_key)), 404, "connection_not_found")
    listing = api.client.get("/serviceapi/connections?organization_code=BETA", headers=auth(acme_key))
    assert_error(listing, 403, "organization_forbidden")
    own = api.client.get("/serviceapi/connections", headers=auth(acme_key)).json()["connections"]
    assert [c["connection_uuid"] for c in own] == [acme_connection]
    creating = create(api, acme_key, organization_code="BETA", integration_id="push_security", name="x", fields={})
    assert_error(creating, 403, "organization_forbidden")
    everything = api.client.get("/serviceapi/connections", headers=auth(admin)).json()["connections"]
    assert {c["organization_code"] for c in everything} == {"ACME", "BETA"}
    assert_error(
        api.client.get(f"/serviceapi/connections/{uuid.uuid4()}", headers=auth(admin)), 404, "connection_not_found"
    )


def _expire(api: Harness, connection_uuid: str) -> None:
    with api.db.write() as session:
        session.execute(
            update(Connection).where(Connection.connection_uuid == uuid.UUID(connection_uuid)).values(expires_at=1000)
        )


def _context_for(api: Harness, integration_id: str, name: str | None = None) -> object:
    org = _org_uuid(api, "ACME")
    with api.db.read() as session:
        return service.skill_context_for(
            session,
            org,
            integration_id,
            name,
            box=api.app.state.secret_box,
            endpoints=api.app.state.endpoints,
            http=api.app.state.outbound,
        )


def _org_uuid(api: Harness, code: str) -> uuid.UUID:
    from vigil.orgs.service import get_organization_by_code

    with api.db.read() as session:
        organization = get_organization_by_code(session, code)
        assert organization is not None
        return organization.organization_uuid


def test_expired_connection_is_not_used_and_says_so(api: Harness, push_fake: PushFake) -> None:
    key = api.add_key().api_key
    assert _context_for(api, "push_security") is None, "no connection at all: None"
    old = _connection_uuid(api, key, "ACME", "old push", domain=push_fake.url)
    _expire(api, old)
    with pytest.raises(service.ConnectionExpired) as caught:
        _context_for(api, "push_security")
    assert "old push" in caught.value.message and caught.value.cause == "Connection expired"
    shown = api.client.get(f"/serviceapi/connections/{old}", headers=auth(key)).json()
    assert shown["expired"] is True
    tested = api.client.post(f"/serviceapi/connections/{old}/test", json={}, headers=auth(key)).json()
    assert (tested["ok"], tested["cause"]) == (False, "Connection expired") and tested["remedy"]
    assert push_fake.requests == [], "an expired connection is never sent to the vendor"
    fresh = create(api, key, integration_id="push_security", name="new push", fields=push_values(push_fake))
    context = _context_for(api, "push_security")
    assert context is not None and context.connection_key == fresh.json()["connection_uuid"]  # type: ignore[attr-defined]
    assert context.values["api_key"] == push.READ_KEY  # type: ignore[attr-defined]
    with pytest.raises(service.ConnectionMissing):
        _context_for(api, "push_security", "no such name")


def test_skill_context_carries_decrypted_values_defaults_and_auth_method(api: Harness) -> None:
    key = api.add_key().api_key
    create(api, key, integration_id="push_security", name="p", fields={"api_key": push.READ_KEY})
    create(api, key, integration_id="cloudflare", name="cf", fields=CLOUDFLARE_KEY_VALUES)
    push_ctx = _context_for(api, "push_security")
    assert dict(push_ctx.values) == {"api_key": push.READ_KEY, "domain": "api.pushsecurity.com"}  # type: ignore[attr-defined]
    cf_ctx = _context_for(api, "cloudflare", "cf")
    assert dict(cf_ctx.values) == CLOUDFLARE_KEY_VALUES  # type: ignore[attr-defined]


def test_no_secret_value_appears_in_responses_logs_or_the_database_file(
    api: Harness,
    backend: str,
    caplog: pytest.LogCaptureFixture,
    mde_fake: MdeFake,
    cloudflare_fake: CloudflareFake,
    slack_fake: SlackFake,
    push_fake: PushFake,
) -> None:
    caplog.set_level(logging.DEBUG)
    key = api.add_key().api_key
    bodies = [
        {"integration_id": "microsoft_defender", "name": "mde", "fields": MDE_VALUES},
        {"integration_id": "cloudflare", "name": "cf token", "fields": CLOUDFLARE_TOKEN_VALUES},
        {"integration_id": "cloudflare", "name": "cf key", "fields": CLOUDFLARE_KEY_VALUES},
        {"integration_id": "slack", "name": "slack", "fields": slack_values(slack_fake)},
        {"integration_id": "push_security", "name": "push", "fields": push_values(push_fake)},
    ]
    texts: list[str] = []
    for body in bodies:
        created = create(api, key, **body)
        assert created.status_code == 201, created.text
        texts.append(created.text)
        url = f"/serviceapi/connections/{created.json()['connection_uuid']}"
        tested = api.client.post(url + "/test", json={}, headers=auth(key))
        assert tested.json()["ok"] is True, tested.text
        texts += [tested.text, api.client.get(url, headers=auth(key)).text]
        texts.append(api.client.patch(url, json={"description": "edited"}, headers=auth(key)).text)
    texts.append(api.client.get("/serviceapi/connections", headers=auth(key)).text)
    texts.append(create(api, key, **bodies[0]).text)  # 409 duplicate
    texts.append(create(api, key, integration_id="slack", name="bad", fields={"bot_token": slack.BOT_TOKEN[5:]}).text)
    logs = "\n".join(r.getMessage() for r in caplog.records)
    for secret in SECRETS:
        assert all(secret not in text for text in texts), f"secret ending {secret[-4:]} in a response"
        assert secret not in logs, f"secret ending {secret[-4:]} in the logs"
    if backend == "sqlite":
        with api.db.engine.connect() as connection:
            connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        database_file = Path(str(api.db.engine.url.database))
        stored = b"".join(p.read_bytes() for p in database_file.parent.glob(database_file.name + "*"))
        assert b"secret_values" in stored and len(stored) > 10_000
        for secret in SECRETS:
            assert secret.encode() not in stored, f"secret ending {secret[-4:]} in the database file"


def test_connection_test_and_skill_context_after_a_new_box_instance(api: Harness, push_fake: PushFake) -> None:
    """Another process (a fresh SecretBox on the same key file) decrypts what this one stored."""
    key = api.add_key().api_key
    created = create(api, key, integration_id="push_security", name="p", fields=push_values(push_fake)).json()
    other = SecretBox.from_settings(api.settings)
    with api.db.read() as session:
        connection = session.get(Connection, uuid.UUID(created["connection_uuid"]))
        assert connection is not None
        assert service.connection_values(connection, other)["api_key"] == push.READ_KEY

    async def run() -> bool:
        from vigil.integrations.http import OutboundClient

        async with OutboundClient() as http:
            result = await service.run_connection_test(
                api.db,
                _admin(),
                uuid.UUID(created["connection_uuid"]),
                box=other,
                endpoints=api.app.state.endpoints,
                http=http,
            )
            return result.ok

    assert asyncio.run(run()) is True


def _admin() -> Principal:
    return Principal(actor_uuid=uuid.uuid4(), name="t", all_organizations=True, organization_uuids=frozenset())
