"""Slack: incoming-webhook notifications and bot-token Web API calls (used by the chat checkpoint)."""

from __future__ import annotations

import uuid

from sqlalchemy.orm import Session

from vigil.auth.schemas import Principal
from vigil.integrations.framework import ConnectionSetup, ConnectionTestResult, Integration, SkillContext
from vigil.integrations.slack import skills as _skills  # noqa: F401  (registers the skills)
from vigil.integrations.slack.chat import SLACK_CHAT, SLACK_INTEGRATION_ID
from vigil.integrations.slack.client import API_URL, SlackWebClient
from vigil.integrations.slack.fields import FIELDS


async def test_connection(ctx: SkillContext) -> ConnectionTestResult:
    """E11 ``auth.test`` with the bot token (posting to the webhook would spam the channel, so it is not tried)."""
    result = await SlackWebClient(ctx).auth_test()
    who = f"{result.user or 'bot'} in workspace {result.team or result.team_id or 'unknown'}"
    return ConnectionTestResult(ok=True, status_code=200, detail=f"Authenticated as {who}.")


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def _setup(session: Session, principal: Principal, connection_uuid: uuid.UUID, base_url: str) -> ConnectionSetup:
    # Imported when a page asks: the manifest reads the connection through the connection service, which imports
    # the catalog, which imports this package.
    from vigil.integrations.slack.manifest import setup_guide

    return setup_guide(session, principal, connection_uuid, base_url)


INTEGRATION = Integration(
    id=SLACK_INTEGRATION_ID,
    name="Slack",
    description="Chat: channel notifications through an incoming webhook and direct-message checkpoints.",
    fields=FIELDS,
    test=test_connection,
    base_urls=(API_URL,),
    chat=SLACK_CHAT,
    setup=_setup,
    position=3,
)
