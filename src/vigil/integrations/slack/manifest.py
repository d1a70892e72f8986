"""The Slack app manifest for one connection: the seed's settings, with E4/E5 URLs carrying its token.

Field names follow Slack's manifest schema v1 (slackapi/manifest-schema). YAML is written by hand from the
same dict (every string double-quoted, which YAML reads exactly like JSON) so no YAML library is needed.
"""

from __future__ import annotations

import json
import re
import uuid
from enum import StrEnum
from typing import Any
from urllib.parse import quote

from sqlalchemy.orm import Session

from vigil.auth.schemas import Principal
from vigil.errors import ValidationFailed
from vigil.integrations.framework import ConnectionSetup, SetupDocument, SetupValue
from vigil.integrations.service import get_connection

EVENTS_PATH = "/serviceapi/webhooks/chat/v1/events"
INTERACTIONS_PATH = "/serviceapi/webhooks/chat/v1/interactions"
BOT_SCOPES = (
    "incoming-webhook",
    "users:read",
    "users:read.email",
    "chat:write",
    "im:write",
    "app_mentions:read",
    "im:history",
)
BOT_EVENTS = ("message.im",)
DEFAULT_APP_NAME = "Vigil"
DEFAULT_BOT_NAME = "Vigil"
_BASE_URL = re.compile(r"^https?://[^\s/?#]+(/[^\s?#]*)?$")


class ManifestFormat(StrEnum):
    JSON = "json"
    YAML = "yaml"


def chat_urls(base_url: str, token: str) -> tuple[str, str]:
    """E4 and E5 for this connection's token."""
    base = base_url.strip().rstrip("/")
    if not _BASE_URL.match(base):
        raise ValidationFailed(
            "base_url must be an absolute http(s) URL without query or fragment.",
            details=[{"field": "base_url", "message": "not an absolute http(s) URL", "type": "value_error"}],
        )
    query = f"?token={quote(token, safe='')}"
    return f"{base}{EVENTS_PATH}{query}", f"{base}{INTERACTIONS_PATH}{query}"


def _checked_name(value: str, field: str, limit: int) -> str:
    name = value.strip()
    if not 1 <= len(name) <= limit:
        raise ValidationFailed(
            f"{field} must be 1 to {limit} characters.",
            details=[{"field": field, "message": f"1 to {limit} characters", "type": "value_error"}],
        )
    return name


def build_manifest(
    *, events_url: str, interactions_url: str, app_name: str = DEFAULT_APP_NAME, bot_name: str = DEFAULT_BOT_NAME
) -> dict[str, Any]:
    return {
        "_metadata": {"major_version": 1, "minor_version": 1},
        "display_information": {
            "name": _checked_name(app_name, "app_name", 35),
            "description": "Security operations: asks users to confirm suspicious activity and posts notifications.",
        },
        "features": {
            "app_home": {
                "home_tab_enabled": False,
                "messages_tab_enabled": True,
                "messages_tab_read_only_enabled": False,
            },
            "bot_user": {"display_name": _checked_name(bot_name, "bot_name", 80), "always_online": True},
        },
        "oauth_config": {"scopes": {"bot": list(BOT_SCOPES)}},
        "settings": {
            "event_subscriptions": {"request_url": events_url, "bot_events": list(BOT_EVENTS)},
            "interactivity": {"is_enabled": True, "request_url": interactions_url},
            "org_deploy_enabled": False,
            "socket_mode_enabled": False,
            "token_rotation_enabled": False,
        },
    }


def connection_manifest(
    session: Session,
    principal: Principal,
    connection_uuid: uuid.UUID,
    *,
    base_url: str,
    app_name: str = DEFAULT_APP_NAME,
    bot_name: str = DEFAULT_BOT_NAME,
) -> dict[str, Any]:
    """The manifest for a Slack connection the principal may see (403/404 as for other connection reads)."""
    events_url, interactions_url = chat_urls(base_url, _slack_connection(session, principal, connection_uuid))
    return build_manifest(
        events_url=events_url, interactions_url=interactions_url, app_name=app_name, bot_name=bot_name
    )


def _slack_connection(session: Session, principal: Principal, connection_uuid: uuid.UUID) -> str:
    """The webhook token of a Slack connection the principal may see (403/404 as for other connection reads)."""
    connection, _code = get_connection(session, principal, connection_uuid)
    if connection.integration_id != "slack":
        raise ValidationFailed(
            f"Connection {connection_uuid} is a {connection.integration_id} connection, not a Slack one.",
            code="not_a_slack_connection",
        )
    return connection.webhook_token


# --- rendering ------------------------------------------------------------------------------------------------


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if value is None:
        return "null"
    return json.dumps(str(value), ensure_ascii=False)  # a JSON string is a valid YAML double-quoted scalar


def _yaml_lines(value: Any, indent: int) -> list[str]:
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list) and item:
                lines.append(f"{pad}{key}:")
                lines.extend(_yaml_lines(item, indent + 1))
            else:
                empty = "{}" if isinstance(item, dict) else "[]"
                lines.append(f"{pad}{key}: {empty if isinstance(item, dict | list) else _scalar(item)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict | list):
                nested = _yaml_lines(item, indent + 1)
                lines.append(f"{pad}- {nested[0].lstrip()}")
                lines.extend(nested[1:])
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    else:
        lines.append(f"{pad}{_scalar(value)}")
    return lines


def to_yaml(manifest: dict[str, Any]) -> str:
    return "\n".join(_yaml_lines(manifest, 0)) + "\n"


def to_json(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2) + "\n"


def setup_guide(session: Session, principal: Principal, connection_uuid: uuid.UUID, base_url: str) -> ConnectionSetup:
    """The Slack app a chat connection needs: create it from this connection's manifest, then enter its secrets."""
    events_url, interactions_url = chat_urls(base_url, _slack_connection(session, principal, connection_uuid))
    manifest = build_manifest(
        events_url=events_url, interactions_url=interactions_url, app_name=DEFAULT_APP_NAME, bot_name=DEFAULT_BOT_NAME
    )
    return ConnectionSetup(
        title="Slack app setup",
        steps=(
            "In Slack, open api.slack.com/apps → Create New App → From an app manifest, pick the workspace and paste "
            "the manifest below (JSON or YAML).",
            "Install the app to the workspace. Copy the Bot User OAuth Token (OAuth & Permissions), the Signing "
            "Secret (Basic Information) and the incoming Webhook URL of the channel into this connection.",
            "Press Authenticate to complete the setup.",
        ),
        values=(
            SetupValue("chat-events-url", "Events URL (E4)", events_url),
            SetupValue("chat-interactions-url", "Interactivity URL (E5)", interactions_url),
        ),
        note="Both carry this connection's webhook token; every request is also verified with its Signing Secret.",
        documents=(
            SetupDocument("manifest-json", "App manifest (JSON)", "JSON", to_json(manifest)),
            SetupDocument("manifest-yaml", "App manifest (YAML)", "YAML", to_yaml(manifest)),
        ),
    )
