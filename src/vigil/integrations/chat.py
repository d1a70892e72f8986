"""The chat capability: what the investigation engine needs from a chat product to put a yes/no question to a
person and hear the answer, with no vendor named. Each chat product implements it in its own folder and declares
it on its ``Integration`` (``chat=``); another product (Teams, Google Chat, e-mail) is one more implementation.

Outbound, the engine calls a provider's async methods with the connection's ``SkillContext``. Inbound, each
provider owns its HTTP route: it verifies the delivery (``verify``), reads it into an ``InboundAnswer``
(``parse_answer``) and hands it to the ``ReceiveDelivery`` its edge gives it, which records and applies it in one
transaction and wakes the waiting playbook after the commit (``investigations/flows.py``).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from vigil.input_types import MAX_CHECKPOINT_TIMEOUT_SECONDS, MIN_CHECKPOINT_TIMEOUT_SECONDS
from vigil.integrations.skill_base import SkillInput, SkillOutput, optional

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from vigil.integrations.skill_base import SkillContext


#: The checkpoint's skill id is in the neutral ``chat`` namespace: any chat provider can answer it.
CHAT_CHECKPOINT_SKILL_ID = "chat.checkpoint"
CHAT_CHECKPOINT_SKILL_NAME = "Chat Checkpoint"


class Decision(StrEnum):
    """What the person said; the evidence's `answer` (plus `timeout` when nobody answered)."""

    CONFIRMED = "confirmed"  # "It was me"
    DENIED = "denied"  # "It was not me"


class AnsweredVia(StrEnum):
    BUTTON = "button"  # one of the question's two answer buttons
    DM = "dm"  # a yes/no reply written in the conversation the question was asked in


_YES = re.compile(r"^(yes|y|yep|yeah|yup|confirm(ed)?|it was me|that was me|was me|me)\b", re.IGNORECASE)
_NO = re.compile(r"^(no|n|nope|nah|deny|denied|it was not me|it wasn'?t me|not me|that was not me)\b", re.IGNORECASE)


def decision_from_reply(text: str) -> Decision | None:
    """A clear yes/no at the start of a written reply; anything else is not taken as an answer."""
    cleaned = re.sub(r"[*_~`>]", "", text).strip().strip(".!").strip()
    if _NO.match(cleaned):
        return Decision.DENIED
    if _YES.match(cleaned):
        return Decision.CONFIRMED
    return None


@dataclass(frozen=True)
class ChatPerson:
    """Someone the chat product knows, found by e-mail."""

    id: str
    name: str | None = None


@dataclass(frozen=True)
class ChatQuestion:
    """What to ask; `checkpoint_id` must come back with a button answer so it finds its waiting playbook."""

    checkpoint_id: uuid.UUID
    question: str
    alert_summary: str = ""


class SentQuestion(BaseModel):
    """Where the question went. `message_ref` is opaque to the engine: it is stored and handed back to the
    provider to rewrite the message. `conversation_id` is where a written reply to it arrives, and `posted_at`
    the provider's exact posting time (decimal Unix seconds), which a reply must be newer than to answer it."""

    recipient_id: str
    recipient_name: str | None = None
    conversation_id: str
    message_ref: dict[str, str]
    posted_at: str


@dataclass(frozen=True)
class InboundAnswer:
    """A person's answer read from a verified delivery. A button press names its checkpoint; a written reply
    does not, so it is matched by who wrote it, in which conversation, and when."""

    connection_uuid: uuid.UUID
    decision: Decision
    via: AnsweredVia
    user_id: str
    conversation_id: str
    user_name: str | None = None
    checkpoint_uuid: uuid.UUID | None = None
    posted_at: str | None = None


class ChatProvider(Protocol):
    """One chat product's side of a Chat Checkpoint (and of notifications)."""

    @property
    def name(self) -> str:
        """The product's name as people read it (its integration's name), for timeline and error texts."""
        ...

    async def find_person(self, ctx: SkillContext, email: str) -> ChatPerson: ...

    async def send_question(self, ctx: SkillContext, person: ChatPerson, question: ChatQuestion) -> SentQuestion: ...

    async def show_outcome(
        self, ctx: SkillContext, message_ref: Mapping[str, str], question: str, answer: str, answered_at: int | None
    ) -> None:
        """Rewrite the question so the person sees what was recorded (and cannot answer again)."""
        ...

    async def notify(self, ctx: SkillContext, text: str) -> None: ...

    def verify(self, values: Mapping[str, str], headers: Mapping[str, str], body: bytes) -> str | None:
        """None when an inbound delivery is signed by the connection (`values` are its decrypted fields), else
        why not (safe to log)."""
        ...

    def parse_answer(self, connection_uuid: uuid.UUID, kind: str, payload: Mapping[str, Any]) -> InboundAnswer | None:
        """The answer a verified delivery of this `kind` carries, or None when it is not one."""
        ...


def encode_message_ref(ref: Mapping[str, str]) -> str:
    return json.dumps(dict(ref), sort_keys=True)


def decode_message_ref(text: str | None) -> dict[str, str]:
    """The stored reference as the provider gave it; empty when none was recorded or it is unreadable."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


# --- the step's inputs and evidence (the same whichever product asked) ----------------------------------------


class ChatCheckpointStepInput(SkillInput):
    """What a playbook step gives the checkpoint; the engine adds the rest."""

    user_email: str = Field(min_length=3, max_length=320, description="Email of the person to ask in chat.")
    question: str = Field(min_length=1, max_length=2000, description="What the person is asked to confirm.")
    timeout_seconds: int | None = Field(
        default=None,
        ge=MIN_CHECKPOINT_TIMEOUT_SECONDS,
        le=MAX_CHECKPOINT_TIMEOUT_SECONDS,
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
    answered_by_account: str | None = optional("Chat name and ID of the person who answered.")
    answered_at: int | None = optional("When the answer arrived (Unix seconds, UTC).")
    answered_via: str | None = optional("button or dm (a yes/no reply in the conversation of the question).")
    asked_user_email: str = Field(description="Who was asked.")
    chat: str = Field(default="", description="The chat integration that asked (its integration id).")
    recipient_id: str = Field(description="The asked person's ID in the chat product (found by email).")
    recipient_name: str | None = optional("The asked person's name in the chat product.")
    conversation_id: str = Field(description="Where the question was posted (e.g. the direct-message channel).")
    message_ref: dict[str, str] = Field(
        default_factory=dict, description="The chat product's reference to the question message (e.g. channel, ts)."
    )
    question: str = Field(description="The question asked.")
    message_updated: bool | None = optional("Whether the chat message was rewritten to show the recorded answer.")


def pending_output(chat: str, email: str, question: str, sent: SentQuestion) -> ChatCheckpointOutput:
    """The evidence right after asking: nobody has answered yet."""
    return ChatCheckpointOutput(
        answer="pending",
        asked_user_email=email,
        chat=chat,
        recipient_id=sent.recipient_id,
        recipient_name=sent.recipient_name,
        conversation_id=sent.conversation_id,
        message_ref=sent.message_ref,
        question=question,
    )


async def ask(provider: ChatProvider, ctx: SkillContext, email: str, question: ChatQuestion) -> SentQuestion:
    """Find the person by email, then post the question to them."""
    person = await provider.find_person(ctx, email)
    return await provider.send_question(ctx, person, question)


# --- answers coming in ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatDelivery:
    """What one verified inbound delivery brought, as its transaction recorded it: `new` is False for a redelivery
    (recorded before, so nothing is applied again); `answers` are the answers it carries."""

    new: bool
    answers: tuple[InboundAnswer, ...] = ()

    @classmethod
    def carrying(cls, answer: InboundAnswer | None) -> ChatDelivery:
        return cls(new=True, answers=() if answer is None else (answer,))


RecordDelivery = Callable[["Session"], ChatDelivery]
"""Stores a delivery in the caller's transaction (once, however often it is delivered) and says what it brought;
raising rolls the whole delivery back, so the sender's retry is processed as new."""

ReceiveDelivery = Callable[[RecordDelivery], ChatDelivery]
"""Runs a `RecordDelivery` in a transaction that also applies its answers, commits, then wakes whoever waits for
them: `investigations.flows.receive_chat_delivery`, which the HTTP edge hands to a provider's inbound route."""
