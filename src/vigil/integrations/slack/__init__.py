"""Slack: incoming-webhook notifications and bot-token Web API calls (used by the chat checkpoint)."""

from __future__ import annotations

from vigil.integrations.framework import ConnectionTestResult, Integration, SkillContext
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

INTEGRATION = Integration(
    id=SLACK_INTEGRATION_ID,
    name="Slack",
    description="Chat: channel notifications through an incoming webhook and direct-message checkpoints.",
    fields=FIELDS,
    test=test_connection,
    base_urls=(API_URL,),
    chat=SLACK_CHAT,
)
