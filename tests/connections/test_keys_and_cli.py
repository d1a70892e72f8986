"""The secret key: key file creation (0600), VIGIL_SECRET_KEY, `vigil secrets rotate` (connection secrets and
organizations' AI model keys), and `vigil connection`."""

from __future__ import annotations

import stat
import uuid

import pytest
from cryptography.fernet import Fernet, InvalidToken
from pydantic import SecretStr
from sqlalchemy import select
from typer.testing import CliRunner

from tests.connections.conftest import auth, create
from tests.fakes.fixtures import push_values
from tests.support.harness import Harness
from vigil.ai.organization_model import choice_for, set_override
from vigil.cli import app
from vigil.errors import ServiceMisconfigured
from vigil.integrations.framework import Endpoints
from vigil.integrations.microsoft_defender.client import API_URL as DEFENDER_API_URL
from vigil.integrations.microsoft_defender.client import AUTH_URL as DEFENDER_AUTH_URL
from vigil.integrations.models import Connection
from vigil.integrations.push_security import fake as push
from vigil.integrations.push_security.fake import PushFake
from vigil.integrations.rotation import reencrypt_all, stale_connections
from vigil.integrations.secrets import SecretBox, SecretsUndecryptable
from vigil.integrations.service import endpoints_from_settings
from vigil.orgs.models import Organization
from vigil.orgs.service import get_organization
from vigil.settings import Settings

runner = CliRunner()


@pytest.fixture
def cli_env(api: Harness, monkeypatch: pytest.MonkeyPatch) -> Harness:
    monkeypatch.setenv("VIGIL_DATABASE_URL", api.settings.resolved_database_url)
    monkeypatch.setenv("VIGIL_DATA_DIR", str(api.settings.data_dir))
    monkeypatch.delenv("VIGIL_SECRET_KEY", raising=False)
    return api


MODEL_KEY = "sk-local-model-key-for-rotation"


def _tokens(api: Harness) -> dict[str, str]:
    """Every encrypted value: connections by name, organizations' AI model keys as `org:<CODE>`."""
    with api.db.read() as session:
        tokens = {c.name: c.secret_values for c in session.scalars(select(Connection))}
        for organization in session.scalars(select(Organization).where(Organization.ai_api_key.is_not(None))):
            tokens[f"org:{organization.organization_code}"] = organization.ai_api_key or ""
        return tokens


def _give_model_key(api: Harness, box: SecretBox, code: str = "ACME") -> None:
    with api.db.write() as session:
        set_override(
            session, code, box, model="openai-chat:llama3.1", base_url="http://gpu.internal:8000/v1", api_key=MODEL_KEY
        )


def _model_key_in_use(api: Harness, box: SecretBox, code: str = "ACME") -> str:
    """The key the engine would hand the model for this organization."""
    with api.db.read() as session:
        chosen = choice_for(session, get_organization(session, code).organization_uuid, api.settings, box)
    assert chosen.api_key is not None
    return chosen.api_key.get_secret_value()


def test_key_file_is_created_with_mode_0600_on_first_use(settings: Settings) -> None:
    box = SecretBox.from_settings(settings)
    key_file = settings.data_dir / "secret.key"
    assert not key_file.exists()
    token = box.encrypt({"api_key": "value"})
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert SecretBox.from_settings(settings).decrypt(token) == {"api_key": "value"}


def test_env_key_is_used_and_a_bad_one_is_a_clear_configuration_error(settings: Settings) -> None:
    key = Fernet.generate_key().decode()
    box = SecretBox.from_settings(settings.model_copy(update={"secret_key": SecretStr(key)}))
    token = box.encrypt({"a": "b"})
    assert Fernet(key.encode()).decrypt(token.encode()) == b'{"a": "b"}'
    assert not (settings.data_dir / "secret.key").exists()
    bad = SecretBox.from_settings(settings.model_copy(update={"secret_key": SecretStr("not-a-key")}))
    with pytest.raises(ServiceMisconfigured) as caught:
        bad.encrypt({})
    assert "not-a-key" not in caught.value.message
    other = SecretBox.from_settings(
        settings.model_copy(update={"secret_key": SecretStr(Fernet.generate_key().decode())})
    )
    with pytest.raises(SecretsUndecryptable):
        other.decrypt(token)


def test_endpoint_settings_default_to_the_public_hosts() -> None:
    assert endpoints_from_settings(Settings()) == Endpoints()
    assert Endpoints().url(DEFENDER_API_URL) == "https://api.securitycenter.microsoft.com"


def test_vendor_urls_override_declared_defaults_and_an_unknown_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "VIGIL_VENDOR_URLS", '{"microsoft_defender.api_url": "https://api-eu.securitycenter.microsoft.com/"}'
    )
    regional = endpoints_from_settings(Settings())
    assert regional.url(DEFENDER_API_URL) == "https://api-eu.securitycenter.microsoft.com"
    assert regional.url(DEFENDER_AUTH_URL) == "https://login.microsoftonline.com"  # not overridden
    with pytest.raises(ValueError, match=r"unknown base URLs microsoft_defender\.api;.*microsoft_defender\.api_url"):
        endpoints_from_settings(Settings(vendor_urls={"microsoft_defender.api": "https://typo.example"}))


def test_secrets_rotate_reencrypts_with_a_new_key_and_drops_the_old(cli_env: Harness, push_fake: PushFake) -> None:
    api = cli_env
    key = api.add_key().api_key
    created = create(api, key, integration_id="push_security", name="p", fields=push_values(push_fake)).json()
    create(api, key, integration_id="push_security", name="q", fields={"api_key": push.FULL_KEY})
    _give_model_key(api, api.app.state.secret_box)
    key_file = api.settings.data_dir / "secret.key"
    old_key = key_file.read_text().strip().encode()
    before = _tokens(api)
    assert set(before) == {"p", "q", "org:ACME"}
    result = runner.invoke(app, ["secrets", "rotate"])
    assert result.exit_code == 0, result.output
    assert "re-encrypted 2 connection(s)" in result.output
    new_key = key_file.read_text().strip().encode()
    assert new_key != old_key and len(key_file.read_text().splitlines()) == 1
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    after = _tokens(api)
    for name, token in after.items():
        assert token != before[name]
        with pytest.raises(InvalidToken):
            Fernet(old_key).decrypt(token.encode())
        Fernet(new_key).decrypt(token.encode())
    # The running app (its box re-reads the rotated file) still serves and tests the connection.
    shown = api.client.get(f"/serviceapi/connections/{created['connection_uuid']}", headers=auth(key)).json()
    assert shown["fields"]["api_key"] == "••••" + push.READ_KEY[-4:]
    tested = api.client.post(f"/serviceapi/connections/{created['connection_uuid']}/test", json={}, headers=auth(key))
    assert tested.json()["ok"] is True
    assert push_fake.requests[-1].headers["x-api-key"] == push.READ_KEY
    # ... and the organization's model still gets its key.
    assert _model_key_in_use(api, api.app.state.secret_box) == MODEL_KEY


def test_secrets_rotate_with_env_keys_moves_everything_to_the_first_key(
    cli_env: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = cli_env
    old = Fernet.generate_key().decode()
    new = Fernet.generate_key().decode()
    with api.db.write() as session:
        connection = session.scalars(select(Connection)).first()
        assert connection is None
    monkeypatch.setenv("VIGIL_SECRET_KEY", old)
    added = runner.invoke(
        app,
        ["connection", "add", "--org", "ACME", "--integration", "push_security", "--name", "p"],
        input=push.READ_KEY + "\n",
    )
    assert added.exit_code == 0, added.output
    assert push.READ_KEY not in added.output
    single = runner.invoke(app, ["secrets", "rotate"])
    assert single.exit_code == 1 and "VIGIL_SECRET_KEY=<new>,<old>" in single.output
    _give_model_key(api, SecretBox.from_settings(api.settings.model_copy(update={"secret_key": SecretStr(old)})))
    monkeypatch.setenv("VIGIL_SECRET_KEY", f"{new},{old}")
    rotated = runner.invoke(app, ["secrets", "rotate"])
    assert rotated.exit_code == 0, rotated.output
    tokens = _tokens(api)
    assert set(tokens) == {"p", "org:ACME"}
    assert Fernet(new.encode()).decrypt(tokens["p"].encode()) == f'{{"api_key": "{push.READ_KEY}"}}'.encode()
    assert Fernet(new.encode()).decrypt(tokens["org:ACME"].encode()) == f'{{"api_key": "{MODEL_KEY}"}}'.encode()
    for token in tokens.values():
        with pytest.raises(InvalidToken):
            Fernet(old.encode()).decrypt(token.encode())
    new_only = SecretBox.from_settings(api.settings.model_copy(update={"secret_key": SecretStr(new)}))
    assert _model_key_in_use(api, new_only) == MODEL_KEY


def test_rotation_reports_and_refuses_an_organization_model_key_no_configured_key_opens(cli_env: Harness) -> None:
    api = cli_env
    old, new, lost = (Fernet.generate_key().decode() for _ in range(3))

    def box(*keys: str) -> SecretBox:
        return SecretBox.from_settings(api.settings.model_copy(update={"secret_key": SecretStr(",".join(keys))}))

    _give_model_key(api, box(old))
    assert stale_connections(api.db, box(new, old)) == ["organization ACME (AI model key)"]
    assert reencrypt_all(api.db, box(new, old)) == 0  # no connections; the organization's key was re-encrypted
    assert stale_connections(api.db, box(new)) == []
    assert _model_key_in_use(api, box(new)) == MODEL_KEY

    api.add_org("BETA")
    _give_model_key(api, box(lost), "BETA")
    before = _tokens(api)
    with pytest.raises(SecretsUndecryptable) as refused:
        reencrypt_all(api.db, box(new))
    assert "organization BETA" in refused.value.message and MODEL_KEY not in refused.value.message
    assert _tokens(api) == before  # nothing changed


def test_connection_cli_add_list_test_delete(
    cli_env: Harness, push_fake: PushFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VIGIL_FIELD_API_KEY", push.READ_KEY)
    added = runner.invoke(
        app,
        ["connection", "add", "--org", "ACME", "--integration", "push_security", "--name", "push prod",
         "--field", f"domain={push_fake.url}", "--description", "Push", "--expires", "2099-01-01"],
    )  # fmt: skip
    assert added.exit_code == 0, added.output
    listing = runner.invoke(app, ["connection", "list", "--org", "ACME"])
    assert "push prod" in listing.output and "2099-01-01" in listing.output
    assert push.READ_KEY not in listing.output
    tested = runner.invoke(app, ["connection", "test", "push prod", "--org", "ACME"])
    assert tested.exit_code == 0, tested.output
    assert push_fake.requests[-1].headers["x-api-key"] == push.READ_KEY
    monkeypatch.setenv("VIGIL_FIELD_API_KEY", push.EXPIRED_KEY)
    runner.invoke(
        app,
        ["connection", "add", "--org", "ACME", "--integration", "push_security", "--name", "push old",
         "--field", f"domain={push_fake.url}"],
    )  # fmt: skip
    failed = runner.invoke(app, ["connection", "test", "push old", "--org", "ACME"])
    assert failed.exit_code == 1 and "remedy:" in failed.output and "401" in failed.output
    assert "failed" in runner.invoke(app, ["connection", "list"]).output
    duplicate = runner.invoke(
        app, ["connection", "add", "--org", "ACME", "--integration", "push_security", "--name", "push old"]
    )
    assert duplicate.exit_code == 1 and "connection_name_exists" in duplicate.output
    unknown = runner.invoke(app, ["connection", "add", "--org", "ACME", "--integration", "nope", "--name", "x"])
    assert unknown.exit_code == 1 and "unknown_integration" in unknown.output
    deleted = runner.invoke(app, ["connection", "delete", "push prod", "--org", "ACME"])
    assert deleted.exit_code == 0, deleted.output
    assert "push prod" not in runner.invoke(app, ["connection", "list"]).output
    missing = runner.invoke(app, ["connection", "test", "push prod", "--org", "ACME"])
    assert missing.exit_code == 1 and "connection_not_found" in missing.output
    assert str(uuid.UUID(int=0)) not in missing.output
