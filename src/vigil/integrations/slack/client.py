"""Slack clients: the Web API (bot token; ``ok:false`` errors; 429 honoured by the HTTP layer) and incoming
webhooks (plain-text error codes). The webhook URL is itself a secret, so it never appears in messages or logs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from vigil.integrations.errors import RATE_LIMITED, SERVICE_ISSUE, UNEXPECTED_RESPONSE, Failure
from vigil.integrations.framework import SkillContext, VendorRecord, VendorUrl, optional
from vigil.integrations.http import json_or_none

_REINSTALL = "Reinstall the app to the workspace and paste the new Bot User OAuth Token."

WEB_API_FAILURES: dict[str, Failure] = {
    "invalid_auth": Failure(
        "invalid_auth",
        "Invalid bot token",
        "Copy the Bot User OAuth Token (xoxb-...) from OAuth & Permissions and save the connection again.",
    ),
    "not_authed": Failure("not_authed", "No token sent", "Enter the Bot User OAuth Token."),
    "account_inactive": Failure("account_inactive", "Bot user or workspace deactivated", _REINSTALL),
    "token_revoked": Failure("token_revoked", "Token revoked", _REINSTALL),
    "token_expired": Failure("token_expired", "Token expired", _REINSTALL),
    "missing_scope": Failure(
        "missing_scope", "Missing OAuth scope", "Add the scopes of Vigil's app manifest, then reinstall the app."
    ),
    "not_allowed_token_type": Failure(
        "not_allowed_token_type", "Wrong token type", "Use the Bot User OAuth Token (xoxb-...), not a user token."
    ),
    "no_permission": Failure("no_permission", "Permission denied", "Grant the app access, then reinstall it."),
    "users_not_found": Failure(
        "user_not_found", "No Slack user with that email", "Check the email or invite the user to the workspace."
    ),
    "user_not_found": Failure("user_not_found", "Slack user not found", "Check the user ID."),
    "channel_not_found": Failure("channel_not_found", "Channel not found", "Check the channel ID."),
    "not_in_channel": Failure("not_in_channel", "Bot not in channel", "Invite the bot to the channel."),
    "is_archived": Failure("is_archived", "Channel archived", "Unarchive the channel or pick another one."),
    "ratelimited": RATE_LIMITED,
}
_TRANSIENT_WEB_ERRORS = frozenset(
    {"fatal_error", "internal_error", "service_unavailable", "request_timeout", "rollup_error"}
)

WEBHOOK_FAILURES: dict[str, Failure] = {
    "invalid_payload": Failure("invalid_payload", "Invalid message payload", "Check the message text and blocks."),
    "no_text": Failure("no_text", "Message has no text", "Give the message some text."),
    "missing_text_or_fallback_or_attachments": Failure("no_text", "Message has no text", "Give the message some text."),
    "invalid_blocks": Failure("invalid_blocks", "Invalid message blocks", "Check the message blocks."),
    "too_many_attachments": Failure("too_many_attachments", "Too many attachments", "Send fewer attachments."),
    "user_not_found": Failure("user_not_found", "Webhook user not found", "Create a new incoming webhook."),
    "action_prohibited": Failure(
        "action_prohibited", "Posting prohibited by a workspace admin", "Ask a Slack admin to allow the app to post."
    ),
    "posting_to_general_channel_denied": Failure(
        "posting_to_general_channel_denied",
        "Only admins may post to this channel",
        "Choose another channel for the webhook.",
    ),
    "channel_not_found": Failure(
        "channel_not_found", "Webhook channel not found", "Create a new incoming webhook for an existing channel."
    ),
    "channel_is_archived": Failure(
        "channel_is_archived", "Webhook channel archived", "Unarchive the channel or create a new webhook."
    ),
    "no_service": Failure(
        "no_service", "Webhook disabled or revoked", "Create a new incoming webhook and update the Webhook URL."
    ),
    "no_team": Failure("no_team", "Workspace not found", "Create a new incoming webhook and update the Webhook URL."),
    "invalid_token": Failure(
        "invalid_token", "Webhook URL invalid", "Copy the Webhook URL again from the app's Incoming Webhooks page."
    ),
}


def web_api_failure(error: str) -> Failure:
    if error in WEB_API_FAILURES:
        return WEB_API_FAILURES[error]
    if error in _TRANSIENT_WEB_ERRORS:
        return SERVICE_ISSUE
    return Failure(f"slack_{error or 'error'}", "Slack rejected the request", "See the Slack error code.")


class AuthTestResult(VendorRecord):
    """What ``auth.test`` says about the token (snake_case already in Slack's JSON)."""

    url: str | None = optional("Workspace URL.")
    team: str | None = optional("Workspace name.")
    user: str | None = optional("User name of the token's user (the bot).")
    team_id: str | None = optional("Workspace ID.")
    user_id: str | None = optional("User ID of the token's user.")
    bot_id: str | None = optional("Bot ID when the token is a bot token.")


class SlackProfile(VendorRecord):
    email: str | None = optional("Email address on the profile.")
    display_name: str | None = optional("Display name.")
    real_name: str | None = optional("Full name.")


class SlackUser(VendorRecord):
    id: str = Field(description="Slack user ID, e.g. W012A3CDE.")
    team_id: str | None = optional("Workspace ID.")
    name: str | None = optional("User name.")
    real_name: str | None = optional("Full name.")
    deleted: bool | None = optional("Whether the user is deactivated.")
    is_bot: bool | None = optional("Whether the user is a bot.")
    tz: str | None = optional("Time zone, e.g. America/Los_Angeles.")
    profile: SlackProfile | None = optional("Profile details.")


class PostedMessage(VendorRecord):
    channel: str = Field(description="Channel ID the message is in.")
    ts: str = Field(description="Message timestamp, its ID within the channel.")


API_URL = VendorUrl("slack.api_url", "https://slack.com/api")


class SlackWebClient:
    """Bot-token Web API calls used by the connection test and the Chat Checkpoint (users, DMs, messages)."""

    def __init__(self, ctx: SkillContext) -> None:
        self._ctx = ctx
        self._token = ctx.require("bot_token", "Bot User OAuth Token")
        self._base = ctx.endpoints.url(API_URL)

    async def call(
        self,
        method: str,
        *,
        json: Mapping[str, Any] | None = None,
        params: Mapping[str, str] | None = None,
        http_method: str = "POST",
        idempotent: bool | None = None,
    ) -> Mapping[str, Any]:
        """One Web API method; ``ok:false`` (or a 429 that outlived the retries) becomes an IntegrationError."""
        headers = {"Authorization": f"Bearer {self._token}"}
        if json is not None:
            headers["Content-Type"] = "application/json; charset=utf-8"
        response = await self._ctx.http.request(
            http_method,
            f"{self._base}/{method}",
            headers=headers,
            json=json,
            params=params,
            idempotent=idempotent,
            redactor=self._ctx.redactor,
        )
        body = json_or_none(response)
        if not isinstance(body, dict):
            if response.status_code == 429 or response.status_code >= 500:
                failure = RATE_LIMITED if response.status_code == 429 else SERVICE_ISSUE
                raise failure.error(f"Slack {method} failed with HTTP {response.status_code}.", response.status_code)
            raise UNEXPECTED_RESPONSE.error(f"Slack {method} answered without JSON.", response.status_code)
        if body.get("ok") is True:
            return body
        error = str(body.get("error") or "")
        raise web_api_failure(error).error(f"Slack {method} failed: {error or 'unknown error'}", response.status_code)

    async def auth_test(self) -> AuthTestResult:
        return AuthTestResult.model_validate(await self.call("auth.test", idempotent=True))

    async def users_lookup_by_email(self, email: str) -> SlackUser:
        body = await self.call("users.lookupByEmail", params={"email": email}, http_method="GET")
        return SlackUser.model_validate(body.get("user"))

    async def conversations_open(self, user_id: str) -> str:
        """The DM channel ID with one user (Slack returns the existing DM when there is one)."""
        body = await self.call("conversations.open", json={"users": user_id}, idempotent=True)
        channel = body.get("channel")
        channel_id = channel.get("id") if isinstance(channel, dict) else None
        if not isinstance(channel_id, str):
            raise UNEXPECTED_RESPONSE.error("Slack conversations.open returned no channel id.")
        return channel_id

    async def chat_post_message(
        self, channel: str, text: str, *, blocks: list[dict[str, Any]] | None = None, thread_ts: str | None = None
    ) -> PostedMessage:
        payload: dict[str, Any] = {"channel": channel, "text": text}
        if blocks is not None:
            payload["blocks"] = blocks
        if thread_ts is not None:
            payload["thread_ts"] = thread_ts
        return PostedMessage.model_validate(await self.call("chat.postMessage", json=payload))

    async def chat_update(
        self, channel: str, ts: str, text: str, *, blocks: list[dict[str, Any]] | None = None
    ) -> PostedMessage:
        payload: dict[str, Any] = {"channel": channel, "ts": ts, "text": text}
        if blocks is not None:
            payload["blocks"] = blocks
        return PostedMessage.model_validate(await self.call("chat.update", json=payload, idempotent=True))


async def post_webhook(ctx: SkillContext, payload: Mapping[str, Any]) -> None:
    """POST to the connection's incoming webhook; Slack answers ``ok`` or an HTTP status with a plain-text code."""
    url = ctx.require("webhook_url", "Webhook URL")
    response = await ctx.http.request("POST", url, json=dict(payload), redactor=ctx.redactor)
    if response.status_code == 200:
        return
    code = response.text.strip()[:100]
    failure = WEBHOOK_FAILURES.get(code)
    if failure is None:
        failure = RATE_LIMITED if response.status_code == 429 else None
    if failure is None:
        failure = SERVICE_ISSUE if response.status_code >= 500 else web_api_failure(code)
    raise failure.error(
        f"Slack webhook rejected the message (HTTP {response.status_code} {code or 'no code'}).", response.status_code
    )
