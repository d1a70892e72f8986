"""The Slack app manifest endpoint: every seed setting, E4/E5 URLs with the connection's token, JSON and YAML."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.fixtures import MDE_VALUES
from tests.slack.conftest import SlackSetup
from vigil.integrations.slack.fake_sender import message_im
from vigil.integrations.slack.manifest import build_manifest, to_yaml

SEED_SCOPES = [
    "incoming-webhook",
    "users:read",
    "users:read.email",
    "chat:write",
    "im:write",
    "app_mentions:read",
    "im:history",
]


def manifest_url(chat: SlackSetup) -> str:
    return f"/serviceapi/connections/{chat.connection['connection_uuid']}/slack-manifest"


def assert_seed_settings(manifest: dict[str, Any], base: str, token: str, app: str, bot: str) -> None:
    assert set(manifest) == {"_metadata", "display_information", "features", "oauth_config", "settings"}
    assert manifest["display_information"]["name"] == app
    assert manifest["features"]["bot_user"] == {"display_name": bot, "always_online": True}
    assert manifest["features"]["app_home"] == {
        "home_tab_enabled": False,
        "messages_tab_enabled": True,
        "messages_tab_read_only_enabled": False,
    }
    assert manifest["oauth_config"] == {"scopes": {"bot": SEED_SCOPES}}
    assert manifest["settings"] == {
        "event_subscriptions": {
            "request_url": f"{base}/serviceapi/webhooks/chat/v1/events?token={token}",
            "bot_events": ["message.im"],
        },
        "interactivity": {
            "is_enabled": True,
            "request_url": f"{base}/serviceapi/webhooks/chat/v1/interactions?token={token}",
        },
        "org_deploy_enabled": False,
        "socket_mode_enabled": False,
        "token_rotation_enabled": False,
    }


def test_manifest_has_every_seed_setting_and_the_connection_urls(chat: SlackSetup) -> None:
    response = chat.harness.client.get(
        manifest_url(chat),
        params={"base_url": "https://vigil.example.com/", "app_name": "ACME SecOps", "bot_name": "acme-bot"},
        headers=chat.auth,
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert_seed_settings(response.json(), "https://vigil.example.com", chat.token, "ACME SecOps", "acme-bot")


def test_manifest_base_url_defaults_to_the_request(chat: SlackSetup) -> None:
    response = chat.harness.client.get(manifest_url(chat), headers=chat.auth)
    assert response.status_code == 200, response.text
    assert_seed_settings(response.json(), "http://testserver", chat.token, "Vigil", "Vigil")


def test_manifest_as_yaml_says_the_same(chat: SlackSetup) -> None:
    response = chat.harness.client.get(
        manifest_url(chat), params={"format": "yaml", "base_url": "https://vigil.example.com"}, headers=chat.auth
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/yaml")
    text = response.text
    assert '  bot_user:\n    display_name: "Vigil"\n    always_online: true\n' in text
    assert f'    request_url: "https://vigil.example.com/serviceapi/webhooks/chat/v1/events?token={chat.token}"' in text
    assert '      - "users:read.email"\n' in text and "  token_rotation_enabled: false\n" in text
    yaml = pytest.importorskip("yaml")  # not a dependency; when present, it must read our YAML as the JSON
    as_json = chat.harness.client.get(
        manifest_url(chat), params={"base_url": "https://vigil.example.com"}, headers=chat.auth
    ).json()
    assert yaml.safe_load(text) == as_json


def test_yaml_writer_quotes_awkward_strings() -> None:
    manifest = build_manifest(
        events_url="https://x.example/e?token=a#b", interactions_url="https://x.example/i", app_name='Sec: "Ops" #1'
    )
    rendered = to_yaml(manifest)
    assert 'name: "Sec: \\"Ops\\" #1"' in rendered
    yaml = pytest.importorskip("yaml")
    assert yaml.safe_load(rendered) == manifest


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"base_url": "ftp://x"}, 422),
        ({"base_url": "vigil.example.com"}, 422),
        ({"app_name": "x" * 36}, 422),
        ({"bot_name": " "}, 422),
        ({"format": "toml"}, 422),
    ],
)
def test_manifest_rejects_bad_parameters(chat: SlackSetup, params: dict[str, str], status: int) -> None:
    response = chat.harness.client.get(manifest_url(chat), params=params, headers=chat.auth)
    assert response.status_code == status, response.text
    assert set(response.json()) == {"error"}


def test_manifest_is_tenant_scoped(chat: SlackSetup) -> None:
    chat.harness.add_org("OTHER")
    other_key = chat.harness.add_key("OTHER").api_key
    response = chat.harness.client.get(manifest_url(chat), headers={"Authorization": f"Bearer {other_key}"})
    # Another tenant's connection is not found, and the answer names nothing of it (docs/tenancy.md).
    assert response.status_code == 404, response.text
    assert response.json()["error"]["code"] == "connection_not_found"
    assert "ACME" not in response.text and "hooks.slack.com" not in response.text
    assert chat.harness.client.get(manifest_url(chat)).status_code == 401
    unknown = "/serviceapi/connections/00000000-0000-0000-0000-000000000000/slack-manifest"
    assert chat.harness.client.get(unknown, headers=chat.auth).status_code == 404


def test_non_slack_connection_has_no_manifest_and_its_token_opens_no_webhook(chat: SlackSetup) -> None:
    created = chat.harness.client.post(
        "/serviceapi/connections",
        json={"organization_code": "ACME", "integration_id": "microsoft_defender", "name": "mde", "fields": MDE_VALUES},
        headers=chat.auth,
    )
    assert created.status_code == 201, created.text
    mde = created.json()
    response = chat.harness.client.get(
        f"/serviceapi/connections/{mde['connection_uuid']}/slack-manifest", headers=chat.auth
    )
    assert response.status_code == 422 and response.json()["error"]["code"] == "not_a_slack_connection"
    assert chat.sender.event(mde["webhook_token"], message_im()).status_code == 401
    assert chat.rows() == (0, 0)
