"""Slack as a chat provider: a Chat Checkpoint is a DM from the bot with two buttons, answered by a press (E5)
or a yes/no reply in the DM (E4); notifications go to the connection's incoming webhook."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from vigil.integrations.chat import (
    AnsweredVia,
    ChatPerson,
    ChatQuestion,
    InboundAnswer,
    SentQuestion,
    decision_from_reply,
)
from vigil.integrations.framework import SkillContext
from vigil.integrations.slack.checkpoint import CheckpointButton, outcome_blocks, question_blocks
from vigil.integrations.slack.client import SlackWebClient, post_webhook
from vigil.integrations.slack.payloads import as_object, first_action, interaction_channel
from vigil.integrations.slack.signature import verify_request

SLACK_INTEGRATION_ID = "slack"


class SlackChat:
    """Implements `vigil.integrations.chat.ChatProvider` with the bot token (Web API) and the signing secret."""

    name = "Slack"

    async def find_person(self, ctx: SkillContext, email: str) -> ChatPerson:
        user = await SlackWebClient(ctx).users_lookup_by_email(email)
        return ChatPerson(user.id, user.real_name or (user.profile.real_name if user.profile else None) or user.name)

    async def send_question(self, ctx: SkillContext, person: ChatPerson, question: ChatQuestion) -> SentQuestion:
        """Open the DM and post the question with its buttons; the message (channel, ts) is the reference."""
        client = SlackWebClient(ctx)
        channel = await client.conversations_open(person.id)
        blocks = question_blocks(question.checkpoint_id, question.question, question.alert_summary)
        posted = await client.chat_post_message(channel, question.question, blocks=blocks)
        return SentQuestion(
            recipient_id=person.id,
            recipient_name=person.name,
            conversation_id=posted.channel,
            message_ref={"channel": posted.channel, "ts": posted.ts},
            posted_at=posted.ts,
        )

    async def show_outcome(
        self, ctx: SkillContext, message_ref: Mapping[str, str], question: str, answer: str, answered_at: int | None
    ) -> None:
        text, blocks = outcome_blocks(question, answer, answered_at)
        await SlackWebClient(ctx).chat_update(message_ref["channel"], message_ref["ts"], text, blocks=blocks)

    async def notify(self, ctx: SkillContext, text: str) -> None:
        await post_webhook(ctx, {"text": text})

    def verify(self, values: Mapping[str, str], headers: Mapping[str, str], body: bytes) -> str | None:
        """Slack's v0 signature with the connection's signing secret."""
        signing_secret = values.get("signing_secret", "")
        if not signing_secret:
            return "no_signing_secret"
        failure = verify_request(signing_secret, headers, body)
        return None if failure is None else failure.value

    def parse_answer(self, connection_uuid: uuid.UUID, kind: str, payload: Mapping[str, Any]) -> InboundAnswer | None:
        """`block_actions` (the interaction payload): one of our buttons; `message.im` (the event): a yes/no DM."""
        if kind == "block_actions":
            button = CheckpointButton.parse(str(first_action(payload).get("value", "")))
            if button is None:
                return None
            user = as_object(payload.get("user"))
            return InboundAnswer(
                connection_uuid,
                button.decision,
                AnsweredVia.BUTTON,
                user_id=str(user.get("id", "")),
                conversation_id=interaction_channel(payload),
                user_name=str(user.get("username") or user.get("name") or "") or None,
                checkpoint_uuid=button.checkpoint,
            )
        if kind == "message.im":
            user_id = str(payload.get("user") or "")
            decision = decision_from_reply(str(payload.get("text") or ""))
            if not user_id or decision is None:
                return None
            return InboundAnswer(
                connection_uuid,
                decision,
                AnsweredVia.DM,
                user_id=user_id,
                conversation_id=str(payload.get("channel") or ""),
                posted_at=str(payload.get("ts") or ""),
            )
        return None


SLACK_CHAT = SlackChat()
