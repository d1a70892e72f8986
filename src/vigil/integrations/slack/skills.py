"""Slack skills: Send Chat Message (incoming webhook) and Chat Checkpoint (a DM the playbook waits on)."""

from __future__ import annotations

from pydantic import Field

from vigil.integrations.chat import (
    CHAT_CHECKPOINT_SKILL_ID,
    CHAT_CHECKPOINT_SKILL_NAME,
    ChatCheckpointInput,
    ChatCheckpointOutput,
    ChatQuestion,
    ask,
    pending_output,
)
from vigil.integrations.framework import SkillContext, SkillInput, SkillOutput, optional, skill
from vigil.integrations.slack.chat import SLACK_CHAT, SLACK_INTEGRATION_ID


class SendChatMessageInput(SkillInput):
    text: str = Field(min_length=1, max_length=40_000, description="Message text (Slack mrkdwn).")


class SendChatMessageOutput(SkillOutput):
    delivered: bool = Field(description="True when Slack accepted the message.")
    channel: str | None = optional("Channel the connection's webhook posts to, as configured.")


@skill(
    integration=SLACK_INTEGRATION_ID,
    id="slack.send_chat_message",
    name="Send Chat Message",
    purpose="Posts a notification to the connection's channel through its incoming webhook.",
    permissions=("incoming-webhook",),
    writes=True,
)
async def send_chat_message(ctx: SkillContext, params: SendChatMessageInput) -> SendChatMessageOutput:
    await SLACK_CHAT.notify(ctx, params.text)
    return SendChatMessageOutput(delivered=True, channel=ctx.value("channel"))


@skill(
    integration=SLACK_INTEGRATION_ID,
    id=CHAT_CHECKPOINT_SKILL_ID,
    name=CHAT_CHECKPOINT_SKILL_NAME,
    purpose="Asks a user in a Slack direct message to confirm suspected activity (Confirm it was me / It was not "
    "me, or a yes/no reply) and pauses the playbook until they answer or the timeout passes; the answer becomes "
    "evidence.",
    permissions=("users:read", "users:read.email", "im:write", "chat:write", "im:history"),
    writes=True,
)
async def chat_checkpoint(ctx: SkillContext, params: ChatCheckpointInput) -> ChatCheckpointOutput:
    """Sends the question (lookup by email → open the DM → post); the engine then waits durably for the answer.

    A playbook step naming this skill is run by the engine as a checkpoint through whichever chat connection the
    organization has; this declaration is what the catalog (and the AI) read about it."""
    question = ChatQuestion(params.checkpoint_id, params.question, params.alert_summary)
    sent = await ask(SLACK_CHAT, ctx, params.user_email, question)
    return pending_output(SLACK_INTEGRATION_ID, params.user_email, params.question, sent)
