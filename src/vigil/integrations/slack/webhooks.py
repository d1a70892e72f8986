"""Slack's HTTP surface: E4 events and E5 interactions (signed by Slack), and the app manifest. HTTP only."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.concurrency import run_in_threadpool

from vigil.input_types import Text
from vigil.integrations.secrets import SecretBox
from vigil.integrations.slack import inbound
from vigil.integrations.slack.manifest import (
    DEFAULT_APP_NAME,
    DEFAULT_BOT_NAME,
    ManifestFormat,
    connection_manifest,
    to_json,
    to_yaml,
)
from vigil.web.deps import ChatReceiverDep, DbDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi", tags=["chat"], responses=ERROR_RESPONSES)

TokenQuery = Annotated[Text | None, Query(description="The connection's webhook token (see its webhook_token).")]
UNVERIFIED: dict[int | str, dict[str, Any]] = {
    401: ERROR_RESPONSES[422] | {"description": "Unknown token or not signed by the connection's signing secret"}
}


def _secret_box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


BoxDep = Annotated[SecretBox, Depends(_secret_box)]


@router.post(
    "/webhooks/chat/v1/events",
    summary="E4: Slack Events API deliveries (url_verification, event_callback); signed by Slack",
    responses=UNVERIFIED,
)
async def chat_events(
    request: Request, db: DbDep, box: BoxDep, receive: ChatReceiverDep, token: TokenQuery = None
) -> Response:
    body = await request.body()
    outcome = await run_in_threadpool(inbound.handle_event, db, box, receive, token, request.headers, body)
    if outcome.challenge is not None:
        return JSONResponse({"challenge": outcome.challenge})
    return JSONResponse({"ok": True})


@router.post(
    "/webhooks/chat/v1/interactions",
    summary="E5: Slack interactivity deliveries (form field payload=<json>); signed by Slack",
    responses=UNVERIFIED,
)
async def chat_interactions(
    request: Request, db: DbDep, box: BoxDep, receive: ChatReceiverDep, token: TokenQuery = None
) -> Response:
    body = await request.body()
    await run_in_threadpool(inbound.handle_interaction, db, box, receive, token, request.headers, body)
    return Response(status_code=200)


@router.get(
    "/connections/{connection_uuid}/slack-manifest",
    summary="Slack app manifest for this connection (E4/E5 URLs carry its token), as JSON or YAML",
    response_class=PlainTextResponse,
)
def slack_manifest(
    connection_uuid: uuid.UUID,
    request: Request,
    db: DbDep,
    principal: PrincipalDep,
    format: Annotated[ManifestFormat, Query(description="json or yaml.")] = ManifestFormat.JSON,
    base_url: Annotated[str | None, Query(description="Public base URL of Vigil; default: this request's.")] = None,
    app_name: Annotated[str, Query(description="App display name (1-35 characters).")] = DEFAULT_APP_NAME,
    bot_name: Annotated[str, Query(description="Bot display name (1-80 characters).")] = DEFAULT_BOT_NAME,
) -> Response:
    with db.read() as session:
        manifest = connection_manifest(
            session,
            principal,
            connection_uuid,
            base_url=base_url or str(request.base_url),
            app_name=app_name,
            bot_name=bot_name,
        )
    if format is ManifestFormat.YAML:
        return Response(to_yaml(manifest), media_type="application/yaml")
    return Response(to_json(manifest), media_type="application/json")
