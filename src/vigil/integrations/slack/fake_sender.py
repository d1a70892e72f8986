"""Plays Slack towards Vigil: builds E4/E5 deliveries and signs them exactly as Slack does.

Events go as a JSON body; interactions as ``application/x-www-form-urlencoded`` with one field
``payload=<url-encoded JSON>``; both carry ``X-Slack-Request-Timestamp`` and ``X-Slack-Signature``
(``v0=`` HMAC-SHA256 of ``v0:{timestamp}:{raw body}``), and retries add ``X-Slack-Retry-Num``/``-Reason``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any, TypedDict, Unpack
from urllib.parse import quote

from fastapi.testclient import TestClient
from httpx2 import Response  # the client starlette.testclient uses when it is installed (it is, via openai)

from vigil.integrations.fakes import ScenarioFakeError

#: The fake workspace's signing secret (the connection's ``signing_secret``).
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
EVENTS_PATH = "/serviceapi/webhooks/chat/v1/events"
INTERACTIONS_PATH = "/serviceapi/webhooks/chat/v1/interactions"
USER_AGENT = "Slackbot 1.0 (+https://api.slack.com/robots)"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Computed independently of Vigil's code, from Slack's documented recipe."""
    return "v0=" + hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256).hexdigest()


def url_verification(challenge: str = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P") -> dict[str, Any]:
    return {"token": "Jhj5dZrVaK7ZwHHjRyZWjbDl", "challenge": challenge, "type": "url_verification"}


def message_im(event_id: str = "Ev0PV52K21", text: str = "yes", user: str = "U2147483697") -> dict[str, Any]:
    return {
        "token": "one-long-verification-token",
        "team_id": "T123ABC456",
        "api_app_id": "A0PNCHHK2",
        "event": {
            "type": "message",
            "channel": "D024BE91L",
            "user": user,
            "text": text,
            "ts": "1355517523.000005",
            "event_ts": "1355517523.000005",
            "channel_type": "im",
        },
        "type": "event_callback",
        "authorizations": [{"team_id": "T123ABC456", "user_id": user, "is_bot": False, "is_enterprise_install": False}],
        "event_id": event_id,
        "event_time": 1355517523,
    }


def block_actions(
    action_id: str = "checkpoint_confirm",
    value: str = '{"checkpoint_id": "c1", "decision": "confirm"}',
    *,
    user_id: str = "W111",
    message_ts: str = "111.222",
    action_ts: str = "1596530385.194939",
) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "user": {"id": user_id, "username": "jane", "name": "jane", "team_id": "T111"},
        "api_app_id": "A111",
        "token": "verification_token",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": "D111", "is_ephemeral": False},
        "trigger_id": "111.222.valid",
        "team": {"id": "T111", "domain": "workspace-domain"},
        "channel": {"id": "D111", "name": "directmessage"},
        "response_url": "https://hooks.slack.com/actions/T111/111/random-value",
        "actions": [
            {
                "action_id": action_id,
                "block_id": "checkpoint",
                "text": {"type": "plain_text", "text": "Confirm it was me", "emoji": True},
                "value": value,
                "type": "button",
                "action_ts": action_ts,
            }
        ],
    }


def button_press(
    message: dict[str, Any],
    decision: str,
    *,
    channel: str,
    user_id: str,
    action_ts: str = "1596530385.194939",
) -> dict[str, Any]:
    """The block_actions payload of pressing, in a posted ``message``, the button whose value carries ``decision``
    (``ScenarioFakeError`` when it has none)."""
    buttons = [
        element
        for block in message.get("blocks") or []
        if block.get("type") == "actions"
        for element in block.get("elements", [])
    ]
    button = next((b for b in buttons if json.loads(b["value"]).get("decision") == decision), None)
    if button is None:
        raise ScenarioFakeError(f"the checkpoint question has no {decision!r} button")
    payload = block_actions(
        button["action_id"], button["value"], user_id=user_id, message_ts=str(message["ts"]), action_ts=action_ts
    )
    payload["container"]["channel_id"] = channel
    payload["channel"]["id"] = channel
    return payload


def dm_reply(text: str, *, channel: str, user_id: str, ts: str, event_id: str) -> dict[str, Any]:
    """A ``message.im`` event: ``user_id`` wrote ``text`` in the DM ``channel`` at Slack time ``ts``."""
    payload = message_im(event_id=event_id, text=text, user=user_id)
    payload["event"].update(channel=channel, ts=ts, event_ts=ts)
    return payload


class Signing(TypedDict, total=False):
    """How a delivery is signed and marked; each key left out (or None) means what Slack itself would send."""

    #: ``X-Slack-Request-Timestamp`` (default: now).
    timestamp: int | None
    #: Signs with this secret instead of the sender's (a forged delivery).
    secret: str | None
    #: A redelivery: ``X-Slack-Retry-Num`` (default: the first delivery, no retry headers).
    retry_num: int | None
    #: The redelivery's ``X-Slack-Retry-Reason`` (default: ``http_timeout``).
    retry_reason: str


class SlackSender:
    """Posts signed deliveries to a Vigil app through its TestClient."""

    def __init__(self, client: TestClient, signing_secret: str = SIGNING_SECRET) -> None:
        self.client = client
        self.signing_secret = signing_secret

    def headers(self, body: bytes, content_type: str, **signing: Unpack[Signing]) -> dict[str, str]:
        timestamp = signing.get("timestamp")
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        headers = {
            "Content-Type": content_type,
            "User-Agent": USER_AGENT,
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": sign(signing.get("secret") or self.signing_secret, stamp, body),
        }
        retry_num = signing.get("retry_num")
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = signing.get("retry_reason", "http_timeout")
        return headers

    def post(
        self, path: str, token: str | None, body: bytes, headers: dict[str, str], drop: tuple[str, ...] = ()
    ) -> Response:
        sent = {k: v for k, v in headers.items() if k not in drop}
        params = {"token": token} if token is not None else None
        return self.client.post(path, params=params, content=body, headers=sent)

    def event(
        self, token: str | None, payload: dict[str, Any], *, drop: tuple[str, ...] = (), **signing: Unpack[Signing]
    ) -> Response:
        body = json.dumps(payload).encode()
        return self.post(EVENTS_PATH, token, body, self.headers(body, "application/json", **signing), drop)

    def interaction(
        self, token: str | None, payload: dict[str, Any], *, drop: tuple[str, ...] = (), **signing: Unpack[Signing]
    ) -> Response:
        body = ("payload=" + quote(json.dumps(payload))).encode()
        headers = self.headers(body, "application/x-www-form-urlencoded", **signing)
        return self.post(INTERACTIONS_PATH, token, body, headers, drop)
