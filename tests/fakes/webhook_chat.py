"""A second chat product for the Chat Checkpoint seam: a minimal "webhook chat" as a real loopback HTTP server.

Vigil (through the provider in ``tests.support.webhook_chat``) looks people up, posts questions and rewrites
them with JSON POSTs carrying ``Authorization: Bearer <api key>``. People answer by pressing one of a question's
answers or replying in its conversation; the product delivers that to Vigil's inbound route, signed with the
connection's signing secret (HMAC-SHA256 over ``<timestamp>.<raw body>``), as ``AnswerSender`` does here.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from httpx2 import Response as ClientResponse  # the client starlette.testclient uses when it is installed
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vigil.integrations.fakes import FakeVendor

API_KEY = "wc-api-key-5b0c3e1d"
SIGNING_SECRET = "wc-signing-secret-0f9e8d7c"
TIMESTAMP_HEADER = "X-Chat-Timestamp"
SIGNATURE_HEADER = "X-Chat-Signature"
PEOPLE = {"spengler@ghostbusters.example.com": {"id": "person-spengler", "name": "Egon Spengler"}}

PostedHook = Callable[[dict[str, Any]], None]
"""Called with each question after the product has shown it and before Vigil gets the answer to its POST."""


def signature(secret: str, timestamp: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


class WebhookChatFake(FakeVendor):
    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        super().reset()
        self.questions: list[dict[str, Any]] = []
        self.notifications: list[str] = []
        self.before_post_answer: PostedHook | None = None
        self.hook_errors: list[BaseException] = []

    def routes(self) -> list[Route]:
        return [
            self.route("/people/lookup", self.lookup, ["POST"]),
            self.route("/questions", self.post_question, ["POST"]),
            self.route("/questions/{message_id}/outcome", self.outcome, ["POST"]),
            self.route("/notifications", self.notify, ["POST"]),
        ]

    async def _body(self, request: Request) -> dict[str, Any] | Response:
        if request.headers.get("authorization") != f"Bearer {API_KEY}":
            return JSONResponse({"error": "unauthorized"}, 401)
        body = await request.json()
        return body if isinstance(body, dict) else JSONResponse({"error": "bad_request"}, 400)

    async def lookup(self, request: Request) -> Response:
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        person = PEOPLE.get(str(body.get("email", "")).lower())
        if person is None:
            return JSONResponse({"error": "no_such_person"}, 404)
        return JSONResponse(person)

    async def post_question(self, request: Request) -> Response:
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        question = {
            "message_id": f"m-{uuid.uuid4().hex[:12]}",
            "conversation": f"conv-{body['to']}",
            "posted_at": f"{time.time():.6f}",
            "to": body["to"],
            "text": body["question"],
            "summary": body.get("summary", ""),
            "checkpoint": body["checkpoint"],
            "answers": body["answers"],
            "outcome": None,
        }
        self.questions.append(question)
        hook = self.before_post_answer
        if hook is not None:
            try:
                await asyncio.to_thread(hook, json.loads(json.dumps(question)))
            except Exception as error:
                self.hook_errors.append(error)
        return JSONResponse({k: question[k] for k in ("message_id", "conversation", "posted_at")})

    async def outcome(self, request: Request) -> Response:
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        found = next((q for q in self.questions if q["message_id"] == request.path_params["message_id"]), None)
        if found is None:
            return JSONResponse({"error": "no_such_message"}, 404)
        found |= {"outcome": body["answer"], "outcome_text": body["text"], "answers": []}
        return JSONResponse({"ok": True})

    async def notify(self, request: Request) -> Response:
        body = await self._body(request)
        if isinstance(body, Response):
            return body
        self.notifications.append(str(body["text"]))
        return JSONResponse({"ok": True})


class AnswerSender:
    """Plays the chat product towards Vigil: signed answer deliveries to the provider's inbound route."""

    def __init__(self, client: TestClient, secret: str = SIGNING_SECRET) -> None:
        self.client = client
        self.secret = secret

    def deliver(self, path: str, token: str, payload: dict[str, Any], *, secret: str | None = None) -> ClientResponse:
        body = json.dumps(payload).encode()
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: timestamp,
            SIGNATURE_HEADER: signature(secret or self.secret, timestamp, body),
        }
        response: ClientResponse = self.client.post(path, params={"token": token}, content=body, headers=headers)
        return response


def press(question: dict[str, Any], decision: str, *, user_id: str) -> dict[str, Any]:
    """A press of the question's answer for `decision`, by `user_id`."""
    answer = next(a for a in question["answers"] if a["decision"] == decision)
    return {
        "checkpoint": question["checkpoint"],
        "decision": answer["decision"],
        "user": {"id": user_id},
        "conversation": question["conversation"],
    }


def reply(text: str, *, conversation: str, user_id: str, posted_at: str) -> dict[str, Any]:
    return {"text": text, "user": {"id": user_id}, "conversation": conversation, "posted_at": posted_at}
