"""The `vigil` command line against a real database, and `alert send` against a running server."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.support.harness import Harness
from vigil.cli import app
from vigil.integrations.live_server import LiveServer
from vigil.knowledge.bundle import bundles
from vigil.settings import Settings

runner = CliRunner()


@pytest.fixture
def cli_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("VIGIL_DATABASE_URL", settings.resolved_database_url)
    monkeypatch.setenv("VIGIL_DATA_DIR", str(settings.data_dir))
    return settings


def run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_org_provider_and_apikey_lifecycle(cli_env: Settings) -> None:
    run("db", "upgrade")
    assert "Created organization ACME" in run("org", "add", "acme", "--name", "Acme Corp")
    assert "ACME" in run("org", "list")
    assert "Added provider sentinel_x" in run("provider", "add", "sentinel_x", "--name", "Sentinel X")
    assert "sentinel_x" in run("provider", "list")
    output = run("apikey", "create", "--name", "siem", "--org", "ACME", "--expires-days", "30")
    key = output.strip().splitlines()[-1]
    assert key.startswith("vgl_live_")
    listing = run("apikey", "list")
    assert key[:13] in listing
    assert key not in listing, "the full key is never shown again"
    assert "Revoked" in run("apikey", "revoke", key[:13])


def test_cli_errors_are_readable(cli_env: Settings) -> None:
    run("org", "add", "ACME")
    duplicate = runner.invoke(app, ["org", "add", "ACME"])
    assert duplicate.exit_code == 1
    assert "organization_exists" in duplicate.output
    bad = runner.invoke(app, ["org", "add", "a"])
    assert bad.exit_code == 1
    assert "invalid_organization_code" in bad.output
    unknown_org_key = runner.invoke(app, ["apikey", "create", "--name", "x", "--org", "NOPE"])
    assert unknown_org_key.exit_code == 1


def test_alert_send_posts_to_a_running_server(cli_env: Settings, harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    with LiveServer(harness.app) as server:
        output = run(
            "alert",
            "send",
            "--url",
            server.url,
            "--api-key",
            key,
            "--org",
            "ACME",
            "--provider",
            "okta",
            "--type",
            "Suspicious sign-in",
            "--content",
            '{"user": "jane"}',
        )
    assert '"alert_id": "ACME-OKTA-1"' in output


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_serve_and_worker_refuse_a_model_they_cannot_use(
    cli_env: Settings, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setenv("VIGIL_AI_MODEL", "nosuch:model")

    result = runner.invoke(app, [command])

    assert result.exit_code == 2, result.output
    assert "AI model 'nosuch:model' cannot be used: Unknown provider: nosuch" in " ".join(result.output.split())


def test_knowledge_lists_every_bundle_with_its_provenance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    shipped = bundles()
    table = run("knowledge")
    listed = json.loads(run("knowledge", "--json"))

    assert [entry["name"] for entry in listed] == [bundle.name for bundle in shipped]
    assert {"network", "attack", "identity"} <= {entry["name"] for entry in listed}
    for bundle, entry in zip(shipped, listed, strict=True):
        assert entry == bundle.model_dump(mode="json")
        for text in (bundle.name, bundle.source, bundle.commit[:12], bundle.date, bundle.licence):
            assert text in table, text
        first_count = next(iter(bundle.counts))
        assert f"{first_count.replace('_', ' ')} {bundle.counts[first_count]:,}" in table
