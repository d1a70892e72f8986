"""The `vigil` command line against a real database, and `alert send` against a running server."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

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
    assert {"network", "attack", "identity", "lolrmm", "lolbas", "hijacklibs", "loldrivers"} <= {
        entry["name"] for entry in listed
    }
    for bundle, entry in zip(shipped, listed, strict=True):
        assert entry == bundle.model_dump(mode="json") | {"disabled": False}
        for text in (bundle.name, bundle.source, bundle.commit[:12], bundle.date, bundle.licence):
            assert text in table, text
        first_count = next(iter(bundle.counts))
        assert f"{first_count.replace('_', ' ')} {bundle.counts[first_count]:,}" in table


def test_knowledge_marks_the_bundles_vigil_knowledge_disabled_switches_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.setenv("VIGIL_KNOWLEDGE_DISABLED", "sigma, network")
    listed = {entry["name"]: entry["disabled"] for entry in json.loads(run("knowledge", "--json"))}
    blocks = run("knowledge")

    assert listed == {bundle.name: bundle.name in {"sigma", "network"} for bundle in bundles()}
    titles = [line for line in blocks.splitlines() if line and not line.startswith(" ")]
    marked = {line.split(" - ", 1)[0] for line in titles if "[disabled: VIGIL_KNOWLEDGE_DISABLED" in line}
    assert marked == {"sigma", "network"}


def test_knowledge_names_a_disabled_bundle_that_does_not_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIGIL_KNOWLEDGE_DISABLED", "sigmaa")
    result = runner.invoke(app, ["knowledge", "--json"])

    assert result.exit_code == 0
    assert "VIGIL_KNOWLEDGE_DISABLED names no bundle sigmaa" in result.stderr
    assert all(entry["disabled"] is False for entry in json.loads(result.stdout))


def test_fact_add_list_and_revoke(cli_env: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # the whole table on one line per fact
    run("org", "add", "ACME")
    expires = (datetime.now(UTC) + timedelta(days=60)).strftime("%Y-%m-%d")
    added = run(
        "fact", "add", "--org", "acme", "--kind", "authorised_scanner", "--value", "198.51.100.7",
        "--reason", "Quarterly external scan", "--owner", "alice@acme.example", "--expires", expires,
        "--scope", "external perimeter",
    )  # fmt: skip
    assert f"Recorded authorised_scanner 198.51.100.7 for ACME until {expires}" in added
    fact_id = re.search(r"id ([0-9a-f-]{36})", added)
    assert fact_id is not None
    window = run(
        "fact", "add", "--org", "ACME", "--kind", "change_window", "--value", "CHG-2041", "--reason", "Patch night",
        "--owner", "bob@acme.example", "--expires", expires,
        "--window-start", "2026-12-01T22:00", "--window-end", "2026-12-02T02:00",
    )  # fmt: skip
    assert "Recorded change_window CHG-2041" in window
    listing = run("fact", "list", "--org", "ACME")
    assert "198.51.100.7" in listing and "CHG-2041" in listing and "active" in listing

    assert "Revoked authorised_scanner 198.51.100.7 of ACME" in run("fact", "revoke", fact_id.group(1))
    assert "198.51.100.7" not in run("fact", "list", "--org", "ACME")
    assert "revoked" in run("fact", "list", "--org", "ACME", "--all")


def test_fact_add_refuses_what_the_api_refuses(cli_env: Settings) -> None:
    run("org", "add", "ACME")
    base = ["fact", "add", "--org", "ACME", "--reason", "r", "--owner", "alice@acme.example"]
    past = runner.invoke(app, [*base, "--kind", "vpn_egress", "--value", "192.0.2.0/24", "--expires", "2020-01-01"])
    assert past.exit_code == 1 and "invalid_expiry" in past.output
    bad_ip = runner.invoke(app, [*base, "--kind", "vpn_egress", "--value", "vpn.acme", "--expires", "2099-01-01"])
    assert bad_ip.exit_code == 1 and "invalid_fact_value" in bad_ip.output
    no_window = runner.invoke(app, [*base, "--kind", "change_window", "--value", "CHG-1", "--expires", "2099-01-01"])
    assert no_window.exit_code == 1
    bad_date = runner.invoke(app, [*base, "--kind", "approved_tool", "--value", "x", "--expires", "next week"])
    assert bad_date.exit_code == 1 and "expires_at: Give Unix epoch seconds or an ISO 8601" in bad_date.output
    unknown = runner.invoke(app, ["fact", "revoke", "00000000-0000-0000-0000-000000000001"])
    assert unknown.exit_code == 1 and "fact_not_found" in unknown.output
