"""Slack skills. Send Chat Message posts through the incoming webhook; Chat Checkpoint arrives with chat inbound."""

from __future__ import annotations

from pydantic import Field

from vigil.integrations.framework import SkillContext, SkillInput, SkillOutput, optional, skill
from vigil.integrations.slack.client import post_webhook


class SendChatMessageInput(SkillInput):
    text: str = Field(min_length=1, max_length=40_000, description="Message text (Slack mrkdwn).")


class SendChatMessageOutput(SkillOutput):
    delivered: bool = Field(description="True when Slack accepted the message.")
    channel: str | None = optional("Channel the connection's webhook posts to, as configured.")


@skill(
    integration="slack",
    id="Send Chat Message",
    purpose="Posts a notification to the connection's channel through its incoming webhook.",
    permissions=("incoming-webhook",),
    writes=True,
)
async def send_chat_message(ctx: SkillContext, params: SendChatMessageInput) -> SendChatMessageOutput:
    await post_webhook(ctx, {"text": params.text})
    return SendChatMessageOutput(delivered=True, channel=ctx.value("channel"))
