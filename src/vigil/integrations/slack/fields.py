"""Slack connection fields: the incoming webhook for notifications and the bot token for Web API calls."""

from __future__ import annotations

from vigil.integrations.framework import ConnectionField

FIELDS: tuple[ConnectionField, ...] = (
    ConnectionField(
        name="webhook_url",
        label="Webhook URL",
        type="url",
        secret=True,
        help="Incoming webhook URL (https://hooks.slack.com/services/...) that posts to the chosen channel.",
    ),
    ConnectionField(
        name="channel",
        label="Channel name",
        type="text",
        required=False,
        help="Name of the channel the webhook posts to, e.g. #soc-alerts (for display; the webhook fixes it).",
    ),
    ConnectionField(
        name="bot_token",
        label="Bot User OAuth Token",
        type="secret",
        secret=True,
        pattern=r"^xoxb-",
        help="Bot User OAuth Token from OAuth & Permissions; starts with xoxb-.",
    ),
    ConnectionField(
        name="signing_secret",
        label="Signing Secret",
        type="secret",
        secret=True,
        help="Signing Secret from Basic Information; verifies that event and button requests come from Slack.",
    ),
)
