"""A second chat provider, plugged into Vigil in tests only: it proves the Chat Checkpoint engine depends on the
`ChatProvider` capability and nothing of Slack's. It talks to ``tests.fakes.webhook_chat`` (the product) and owns
its inbound route, verified with the connection's signing secret like every inbound webhook."""

from __future__ import annotations

import hmac
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from tests.fakes.webhook_chat import SIGNATURE_HEADER, TIMESTAMP_HEADER, signature
from vigil.integrations import catalog, chat_inbound
from vigil.integrations.chat import (
    AnsweredVia,
    ChatPerson,
    ChatQuestion,
    Decision,
    InboundAnswer,
    SentQuestion,
    decision_from_reply,
)
from vigil.integrations.errors import UNEXPECTED_RESPONSE, Failure, IntegrationError, generic_status_failure
from vigil.integrations.framework import ConnectionField, ConnectionTestResult, Integration, SkillContext
from vigil.integrations.http import json_or_none
from vigil.integrations.secrets import SecretBox
from vigil.web.deps import ChatReceiverDep, DbDep

INTEGRATION_ID = "webhook_chat"
ANSWERS_PATH = "/serviceapi/webhooks/webhook-chat/v1"
MAX_SKEW_SECONDS = 300
NO_SUCH_PERSON = Failure("user_not_found", "No such person in Webhook Chat", "Check the email.")
UNAUTHORIZED = Failure("invalid_auth", "Invalid API key", "Enter the API key again.")


class WebhookChat:
    name = "Webhook Chat"

    async def _post(self, ctx: SkillContext, path: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        base = ctx.require("base_url", "Base URL").rstrip("/")
        headers = {"Authorization": f"Bearer {ctx.require('api_key', 'API key')}"}
        response = await ctx.http.request(
            "POST", base + path, headers=headers, json=dict(payload), redactor=ctx.redactor
        )
        body = json_or_none(response)
        if response.status_code == 200 and isinstance(body, dict):
            return body
        failure = {401: UNAUTHORIZED, 404: NO_SUCH_PERSON}.get(response.status_code)
        failure = failure or generic_status_failure(response.status_code) or UNEXPECTED_RESPONSE
        raise failure.error(f"Webhook Chat {path} failed with HTTP {response.status_code}", response.status_code)

    async def find_person(self, ctx: SkillContext, email: str) -> ChatPerson:
        body = await self._post(ctx, "/people/lookup", {"email": email})
        return ChatPerson(str(body["id"]), body.get("name"))

    async def send_question(self, ctx: SkillContext, person: ChatPerson, question: ChatQuestion) -> SentQuestion:
        answers = [
            {"decision": Decision.CONFIRMED.value, "label": "Confirm it was me"},
            {"decision": Decision.DENIED.value, "label": "It was not me"},
        ]
        body = await self._post(
            ctx,
            "/questions",
            {
                "to": person.id,
                "question": question.question,
                "summary": question.alert_summary,
                "checkpoint": str(question.checkpoint_id),
                "answers": answers,
            },
        )
        return SentQuestion(
            recipient_id=person.id,
            recipient_name=person.name,
            conversation_id=str(body["conversation"]),
            message_ref={"message_id": str(body["message_id"])},
            posted_at=str(body["posted_at"]),
        )

    async def show_outcome(
        self, ctx: SkillContext, message_ref: Mapping[str, str], question: str, answer: str, answered_at: int | None
    ) -> None:
        text = f"{question}: recorded answer {answer}"
        await self._post(ctx, f"/questions/{message_ref['message_id']}/outcome", {"answer": answer, "text": text})

    async def notify(self, ctx: SkillContext, text: str) -> None:
        await self._post(ctx, "/notifications", {"text": text})

    def verify(self, values: Mapping[str, str], headers: Mapping[str, str], body: bytes) -> str | None:
        secret = values.get("signing_secret", "")
        timestamp = headers.get(TIMESTAMP_HEADER) or ""
        given = headers.get(SIGNATURE_HEADER) or ""
        if not secret:
            return "no_signing_secret"
        if not timestamp.isdigit() or not given:
            return "missing_headers"
        if abs(time.time() - int(timestamp)) > MAX_SKEW_SECONDS:
            return "stale_timestamp"
        if not hmac.compare_digest(signature(secret, timestamp, body).encode(), given.encode()):
            return "bad_signature"
        return None

    def parse_answer(self, connection_uuid: uuid.UUID, kind: str, payload: Mapping[str, Any]) -> InboundAnswer | None:
        user = payload.get("user")
        user_id = str(user.get("id") or "") if isinstance(user, dict) else ""
        conversation = str(payload.get("conversation") or "")
        if kind == "press":
            try:
                checkpoint, decision = uuid.UUID(str(payload.get("checkpoint"))), Decision(str(payload.get("decision")))
            except ValueError:
                return None
            return InboundAnswer(
                connection_uuid,
                decision,
                AnsweredVia.BUTTON,
                user_id=user_id,
                conversation_id=conversation,
                checkpoint_uuid=checkpoint,
            )
        replied = decision_from_reply(str(payload.get("text") or "")) if kind == "reply" else None
        if replied is None:
            return None
        return InboundAnswer(
            connection_uuid,
            replied,
            AnsweredVia.DM,
            user_id=user_id,
            conversation_id=conversation,
            posted_at=str(payload.get("posted_at") or ""),
        )


WEBHOOK_CHAT = WebhookChat()


async def test_connection(ctx: SkillContext) -> ConnectionTestResult:
    try:
        await WEBHOOK_CHAT.find_person(ctx, "connection-test@vigil.invalid")
    except IntegrationError as error:
        if error.code != NO_SUCH_PERSON.code:  # an unknown person means the key was accepted
            raise
    return ConnectionTestResult(ok=True, status_code=200, detail="API key accepted.")


test_connection.__test__ = False  # type: ignore[attr-defined]

INTEGRATION = Integration(
    id=INTEGRATION_ID,
    name="Webhook Chat",
    description="Tests' second chat product: questions as JSON POSTs, answers as signed webhooks.",
    fields=(
        ConnectionField("base_url", "Base URL", "url", "Where the product's API listens."),
        ConnectionField("api_key", "API key", "secret", "Sent as a bearer token.", secret=True),
        ConnectionField("signing_secret", "Signing secret", "secret", "Signs answer deliveries.", secret=True),
    ),
    test=test_connection,
    chat=WEBHOOK_CHAT,
)

router = APIRouter()


@router.post(ANSWERS_PATH + "/{kind}")
async def answers(
    kind: str, request: Request, db: DbDep, receive: ChatReceiverDep, token: Annotated[str | None, Query()] = None
) -> JSONResponse:
    box: SecretBox = request.app.state.secret_box
    body = await request.body()
    answered = await run_in_threadpool(
        chat_inbound.receive_answer, db, box, receive, INTEGRATION_ID, kind, token, request.headers, body
    )
    return JSONResponse({"ok": True, "answer": answered})


@contextmanager
def installed() -> Iterator[None]:
    """Declare the integration for the test (the engine threads of the test's app see it too)."""
    catalog.add_integration(INTEGRATION)
    try:
        yield
    finally:
        catalog.remove_integration(INTEGRATION_ID)


def mount(app: FastAPI) -> None:
    app.include_router(router)
