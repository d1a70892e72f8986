"""The Slack side of a Chat Checkpoint: the question message with its two buttons, the button payload, and the
message rewritten to show the recorded answer.

The engine owns the waiting (a durable `DBOS.recv`); this module only speaks Slack.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from vigil.integrations.chat import Decision

CONFIRM_ACTION_ID = "vigil_checkpoint_confirm"
DENY_ACTION_ID = "vigil_checkpoint_deny"
ACTION_BLOCK_ID = "vigil_checkpoint"
MAX_SECTION_TEXT = 3000  # Slack's limit for a section block's text


class CheckpointButton(BaseModel):
    """The `value` of each button: which checkpoint and which answer, parsed, never split by hand."""

    model_config = ConfigDict(extra="forbid")

    checkpoint: uuid.UUID
    decision: Decision

    @classmethod
    def parse(cls, value: str) -> CheckpointButton | None:
        try:
            return cls.model_validate_json(value)
        except ValidationError:
            return None


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:MAX_SECTION_TEXT]}}


def question_blocks(checkpoint_id: uuid.UUID, question: str, alert_summary: str) -> list[dict[str, Any]]:
    """The DM: the question, a short alert summary, and Confirm / Not me buttons carrying the checkpoint id."""

    def button(text: str, action_id: str, decision: Decision, style: str) -> dict[str, Any]:
        value = CheckpointButton(checkpoint=checkpoint_id, decision=decision).model_dump_json()
        return {
            "type": "button",
            "text": {"type": "plain_text", "text": text, "emoji": False},
            "action_id": action_id,
            "value": value,
            "style": style,
        }

    blocks = [_section(f"*Security check from Vigil*\n{question}")]
    if alert_summary:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": alert_summary[:MAX_SECTION_TEXT]}]})
    blocks.append(
        {
            "type": "actions",
            "block_id": ACTION_BLOCK_ID,
            "elements": [
                button("Confirm it was me", CONFIRM_ACTION_ID, Decision.CONFIRMED, "primary"),
                button("It was not me", DENY_ACTION_ID, Decision.DENIED, "danger"),
            ],
        }
    )
    blocks.append(
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "You can also reply *yes* or *no* here."}]}
    )
    return blocks


OUTCOME_TEXT = {
    "confirmed": ":white_check_mark: You confirmed it was you",
    "denied": ":rotating_light: You said it was not you; the security team has been alerted",
    "timeout": ":hourglass: No answer arrived in time; the investigation continued without it",
}


def outcome_blocks(question: str, answer: str, answered_at: int | None) -> tuple[str, list[dict[str, Any]]]:
    """The same message after the checkpoint is resolved: the question, the recorded answer, no buttons."""
    when = ""
    if answered_at is not None:
        when = " at " + datetime.fromtimestamp(answered_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    outcome = OUTCOME_TEXT.get(answer, answer) + when + "."
    blocks = [_section(f"*Security check from Vigil*\n{question}"), _section(outcome)]
    return outcome, blocks
