"""Slack skills: Send Chat Message (incoming webhook) and Chat Checkpoint (a DM the playbook waits on)."""

from __future__ import annotations

import uuid

from pydantic import Field

from vigil.integrations.framework import SkillContext, SkillInput, SkillOutput, optional, skill
from vigil.integrations.slack.checkpoint import question_blocks
from vigil.integrations.slack.client import SlackWebClient, post_webhook

CHAT_CHECKPOINT_SKILL_ID = "Chat Checkpoint"


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


class ChatCheckpointStepInput(SkillInput):
    """What a playbook step gives the checkpoint; the engine adds the rest."""

    user_email: str = Field(min_length=3, max_length=320, description="Email of the Slack user to ask.")
    question: str = Field(min_length=1, max_length=2000, description="What the user is asked to confirm.")
    timeout_seconds: int | None = Field(
        default=None,
        ge=5,
        le=7 * 24 * 3600,
        description="How long the playbook waits for the answer; empty: the organization's default (else the "
        "service-wide one, 15 min unless configured).",
    )


class ChatCheckpointInput(ChatCheckpointStepInput):
    alert_summary: str = Field(
        default="", max_length=3000, description="Set by Vigil: one line about the alert shown under the question."
    )
    checkpoint_id: uuid.UUID = Field(description="Set by Vigil: ties the buttons and replies to the waiting playbook.")


class ChatCheckpointOutput(SkillOutput):
    """The step's evidence: the answer (`pending` only while the playbook is waiting) and who gave it when."""

    answer: str = Field(description="confirmed (it was me), denied (it was not me), timeout, or pending.")
    answered_by: str | None = optional("Email of the person who answered (only the asked user's answer counts).")
    answered_by_slack: str | None = optional("Slack name and ID of the person who answered.")
    answered_at: int | None = optional("When the answer arrived (Unix seconds, UTC).")
    answered_via: str | None = optional("button or dm (a yes/no reply in the direct message).")
    asked_user_email: str = Field(description="Who was asked.")
    slack_user_id: str = Field(description="Slack ID of the asked user (users.lookupByEmail).")
    slack_user_name: str | None = optional("The asked user's name in Slack.")
    channel: str = Field(description="ID of the direct-message channel (conversations.open).")
    message_ts: str = Field(description="Timestamp (ID) of the question message (chat.postMessage).")
    question: str = Field(description="The question asked.")
    message_updated: bool | None = optional("Whether the Slack message was rewritten to show the recorded answer.")


@skill(
    integration="slack",
    id=CHAT_CHECKPOINT_SKILL_ID,
    purpose="Asks a user in a Slack direct message to confirm suspected activity (Confirm it was me / It was not "
    "me, or a yes/no reply) and pauses the playbook until they answer or the timeout passes; the answer becomes "
    "evidence.",
    permissions=("users:read", "users:read.email", "im:write", "chat:write", "im:history"),
    writes=True,
)
async def chat_checkpoint(ctx: SkillContext, params: ChatCheckpointInput) -> ChatCheckpointOutput:
    """Sends the question (lookup by email → open the DM → post); the engine then waits durably for the answer."""
    client = SlackWebClient(ctx)
    user = await client.users_lookup_by_email(params.user_email)
    channel = await client.conversations_open(user.id)
    blocks = question_blocks(params.checkpoint_id, params.question, params.alert_summary)
    posted = await client.chat_post_message(channel, params.question, blocks=blocks)
    return ChatCheckpointOutput(
        answer="pending",
        asked_user_email=params.user_email,
        slack_user_id=user.id,
        slack_user_name=user.real_name or (user.profile.real_name if user.profile else None) or user.name,
        channel=posted.channel,
        message_ts=posted.ts,
        question=params.question,
    )
