"""Loopback fake of Slack's Web API (reference C.4/C.5) and incoming webhooks (C.6)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from vigil.integrations.chat import decode_message_ref
from vigil.integrations.fakes import (
    AskedQuestion,
    ChatScenarioFake,
    ScenarioData,
    ScenarioFakeError,
    StatefulFakeVendor,
    form_of,
)
from vigil.integrations.slack.checkpoint import CheckpointButton
from vigil.integrations.slack.fake_sender import SIGNING_SECRET, SlackSender, button_press

BOT_TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"
REVOKED_TOKEN = "xoxb-17653672481-19874698323-revokedrevokedrevoked"
WEBHOOK_PATH = "/services/T0G9PQBBK/B0123ABCD/k3Yq8ZAbCdEfGhIjKlMnOpQr"

USERS: dict[str, dict[str, Any]] = {
    "spengler@ghostbusters.example.com": {
        "id": "W012A3CDE",
        "team_id": "T0G9PQBBK",
        "name": "spengler",
        "deleted": False,
        "color": "9f69e7",
        "real_name": "Egon Spengler",
        "tz": "America/Los_Angeles",
        "tz_label": "Pacific Daylight Time",
        "tz_offset": -25200,
        "profile": {
            "real_name": "Egon Spengler",
            "display_name": "spengler",
            "email": "spengler@ghostbusters.example.com",
        },
        "is_admin": True,
        "is_owner": False,
        "is_bot": False,
        "is_app_user": False,
        "updated": 1502138686,
    },
}


#: The direct-message channel the documentation shows for its example user; other users get one derived from their id.
DOCUMENTED_DMS = {"W012A3CDE": "D069C7QFK"}


def dm_channel(user_id: str) -> str:
    """The id of the bot's direct conversation with ``user_id`` (one per user, as Slack keeps it)."""
    return DOCUMENTED_DMS.get(user_id) or "D" + user_id[1:]


PostedHook = Callable[[str, str, dict[str, Any]], None]
"""``(channel, ts, message)`` of a message chat.postMessage has just stored."""


class SlackFake(StatefulFakeVendor):
    """Control: ``webhook_archived`` (410), ``fail_next(...)`` for 429/ratelimited and other errors, and
    ``before_post_answer``: called with each posted message after Slack has stored (shown) it and before the
    poster gets chat.postMessage's answer, as when a person presses a button (and Slack delivers E5) before
    that answer arrives. What the hook raises is kept in ``hook_errors`` (the post still succeeds)."""

    def reset(self) -> None:
        super().reset()
        self.webhook_archived = False
        self.webhook_messages: list[dict[str, Any]] = []
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}
        #: Every chat.postMessage as it was first posted (``messages`` shows later chat.update rewrites).
        self.posted: list[tuple[str, dict[str, Any]]] = []
        self.before_post_answer: PostedHook | None = None
        self.hook_errors: list[BaseException] = []

    @property
    def webhook_url(self) -> str:
        return self.url + WEBHOOK_PATH

    @property
    def api_url(self) -> str:
        return self.url + "/api"

    def routes(self) -> list[Route]:
        return [
            self.route("/api/auth.test", self.auth_test, ["POST"]),
            self.route("/api/users.lookupByEmail", self.lookup_by_email, ["GET", "POST"]),
            self.route("/api/conversations.open", self.conversations_open, ["POST"]),
            self.route("/api/chat.postMessage", self.post_message, ["POST"]),
            self.route("/api/chat.update", self.update, ["POST"]),
            self.route("/services/{team}/{bot}/{secret}", self.webhook, ["POST"]),
        ]

    def _auth(self, request: Request) -> JSONResponse | None:
        header = request.headers.get("authorization")
        if not header:
            return JSONResponse({"ok": False, "error": "not_authed"})
        token = header.removeprefix("Bearer ")
        if token == REVOKED_TOKEN:
            return JSONResponse({"ok": False, "error": "token_revoked"})
        if token != BOT_TOKEN:
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        return None

    async def _args(self, request: Request) -> dict[str, Any]:
        if request.headers.get("content-type", "").startswith("application/json"):
            body = await request.json()
            return body if isinstance(body, dict) else {}
        return {**dict(request.query_params), **await form_of(request)}

    async def auth_test(self, request: Request) -> Response:
        return self._auth(request) or JSONResponse(
            {
                "ok": True,
                "url": "https://subarachnoid.slack.com/",
                "team": "Subarachnoid Workspace",
                "user": "bot",
                "team_id": "T0G9PQBBK",
                "user_id": "W23456789",
                "bot_id": "BZYBOTHED",
            }
        )

    async def lookup_by_email(self, request: Request) -> Response:
        denied = self._auth(request)
        if denied:
            return denied
        user = USERS.get(str((await self._args(request)).get("email", "")).lower())
        if user is None:
            return JSONResponse({"ok": False, "error": "users_not_found"})
        return JSONResponse({"ok": True, "user": user})

    async def conversations_open(self, request: Request) -> Response:
        denied = self._auth(request)
        if denied:
            return denied
        users = str((await self._args(request)).get("users", ""))
        if not users:
            return JSONResponse({"ok": False, "error": "users_list_not_supplied"})
        if not any(u["id"] == users for u in USERS.values()):
            return JSONResponse({"ok": False, "error": "user_not_found"})
        return JSONResponse({"ok": True, "channel": {"id": dm_channel(users)}})

    async def post_message(self, request: Request) -> Response:
        denied = self._auth(request)
        if denied:
            return denied
        args = await self._args(request)
        if not args.get("channel"):
            return JSONResponse({"ok": False, "error": "channel_not_found"})
        if not args.get("text") and not args.get("blocks"):
            return JSONResponse({"ok": False, "error": "no_text"})
        ts = f"{time.time():.6f}"
        message = {
            "text": args.get("text", ""),
            "blocks": args.get("blocks"),
            "bot_id": "BZYBOTHED",
            "type": "message",
            "subtype": "bot_message",
            "ts": ts,
        }
        self.messages[(args["channel"], ts)] = message
        self.posted.append((str(args["channel"]), json.loads(json.dumps(message))))
        hook = self.before_post_answer
        if hook is not None:
            try:
                # In a thread: the hook may call back into Vigil, which may call this fake again.
                await asyncio.to_thread(hook, str(args["channel"]), ts, json.loads(json.dumps(message)))
            except Exception as error:
                self.hook_errors.append(error)
        return JSONResponse({"ok": True, "channel": args["channel"], "ts": ts, "message": message})

    async def update(self, request: Request) -> Response:
        denied = self._auth(request)
        if denied:
            return denied
        args = await self._args(request)
        key = (str(args.get("channel")), str(args.get("ts")))
        if key not in self.messages:
            return JSONResponse({"ok": False, "error": "message_not_found"})
        self.messages[key].update(text=args.get("text", ""), blocks=args.get("blocks"))
        return JSONResponse(
            {
                "ok": True,
                "channel": key[0],
                "ts": key[1],
                "text": args.get("text", ""),
                "message": {"text": args.get("text", ""), "user": "W23456789"},
            }
        )

    async def webhook(self, request: Request) -> Response:
        if request.url.path != WEBHOOK_PATH:
            return PlainTextResponse("invalid_token", 403)
        if self.webhook_archived:
            return PlainTextResponse("channel_is_archived", 410)
        try:
            payload = json.loads(await request.body())
        except ValueError:
            return PlainTextResponse("invalid_payload", 400)
        if not isinstance(payload, dict):
            return PlainTextResponse("invalid_payload", 400)
        if not payload.get("text") and not payload.get("blocks"):
            return PlainTextResponse("no_text", 400)
        self.webhook_messages.append(payload)
        return PlainTextResponse("ok")


# --- evaluation scenarios ---------------------------------------------------------------------------------------

_TEAM_ID = "T0G9PQBBK"


def connection_values(fake: SlackFake) -> dict[str, str]:
    """Connection fields that authenticate at ``fake`` (webhook, bot token, signing secret)."""
    return {
        "webhook_url": fake.webhook_url,
        "channel": "#soc-alerts",
        "bot_token": BOT_TOKEN,
        "signing_secret": SIGNING_SECRET,
    }


class SlackData(ScenarioData):
    """Connected; every e-mail address in the scenario resolves to a Slack user."""


class SlackScenarioFake(ChatScenarioFake[SlackFake, SlackData]):
    """Answers a checkpoint question as a signed block_actions interaction from the asked user (E5)."""

    integration_id = "slack"

    def connection_values(self) -> dict[str, str]:
        return connection_values(self.fake)

    def base_url(self) -> str:
        return self.fake.api_url

    def add_people(self, emails: list[str]) -> list[str]:
        """The fake only knows a fixed set of users: each unknown address becomes one, with a stable id."""
        added = []
        for email in sorted({email.lower() for email in emails}):
            if email in USERS:
                continue
            user_id = "U" + hashlib.sha1(email.encode()).hexdigest()[:10].upper()  # an id, not a secret  # noqa: S324
            name = email.split("@", 1)[0]
            USERS[email] = {
                "id": user_id,
                "team_id": _TEAM_ID,
                "name": name,
                "deleted": False,
                "real_name": name,
                "tz": "UTC",
                "profile": {"real_name": name, "display_name": name, "email": email},
                "is_admin": False,
                "is_owner": False,
                "is_bot": False,
                "is_app_user": False,
                "updated": 1502138686,
            }
            added.append(email)
        return added

    def remove_people(self, emails: list[str]) -> None:
        for email in emails:
            USERS.pop(email, None)

    def _posted(self, message_ref: str | None) -> tuple[str, str] | None:
        message = decode_message_ref(message_ref)
        if "channel" not in message or "ts" not in message:
            return None
        key = (message["channel"], message["ts"])
        return key if key in self.fake.messages else None

    def questions_asked(self) -> list[AskedQuestion]:
        """Each posted message with answer buttons; the recipient is the user whose DM channel it went to."""
        emails = {dm_channel(str(user["id"])): email for email, user in USERS.items()}
        asked = []
        for channel, message in self.fake.posted:
            values = [
                str(element.get("value", ""))
                for block in message.get("blocks") or []
                if isinstance(block, dict) and block.get("type") == "actions"
                for element in block.get("elements", [])
            ]
            if not values:
                continue
            button = next((parsed for value in values if (parsed := CheckpointButton.parse(value))), None)
            checkpoint_id = str(button.checkpoint) if button is not None else None
            asked.append(AskedQuestion(checkpoint_id, emails.get(channel, channel)))
        return asked

    def question_posted(self, message_ref: str | None, recipient_id: str) -> bool:
        return self._posted(message_ref) is not None

    def answer(self, client: TestClient, token: str, message_ref: str | None, recipient_id: str, decision: str) -> None:
        posted = self._posted(message_ref)
        if posted is None:
            raise ScenarioFakeError("the checkpoint question is not in the Slack fake")
        payload = button_press(
            self.fake.messages[posted],
            decision,
            channel=posted[0],
            user_id=recipient_id,
            action_ts=f"{time.time():.6f}",
        )
        response = SlackSender(client).interaction(token, payload)
        if response.status_code != 200:
            raise ScenarioFakeError(f"the button press was refused: HTTP {response.status_code} {response.text[:200]}")


SCENARIO_FAKE = SlackScenarioFake
