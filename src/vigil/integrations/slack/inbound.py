"""Inbound Slack deliveries (E4 events, E5 interactions): verify, record once, hand to registered hooks, and
read the Chat Checkpoint answer a new delivery carries.

Every request is checked against the signing secret of the connection its ``?token=`` names, over the raw
body, before anything is parsed or stored. Recording is an insert that does nothing on a duplicate key, so
a retried event (same ``event_id``) or a double click reaches the hooks, and answers its checkpoint, once.
The transaction is not this module's: the record runs inside the ``ReceiveDelivery`` the E4/E5 routes hand in
(``investigations.flows.receive_chat_delivery``), which applies the answer and, after the commit, wakes the
waiting playbook. Nothing here calls out: Slack wants an answer within 3 seconds, so hooks must only record.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from sqlalchemy.orm import Session

from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.db.upsert import dialect_insert
from vigil.errors import ValidationFailed
from vigil.integrations import chat_inbound
from vigil.integrations.chat import ChatDelivery, ReceiveDelivery
from vigil.integrations.chat_inbound import VerifiedConnection, json_object
from vigil.integrations.secrets import SecretBox
from vigil.integrations.slack.chat import SLACK_CHAT, SLACK_INTEGRATION_ID
from vigil.integrations.slack.models import ChatEvent, ChatInteraction
from vigil.integrations.slack.payloads import as_object, first_action, interaction_channel
from vigil.integrations.slack.signature import RETRY_NUM_HEADER, RETRY_REASON_HEADER

logger = logging.getLogger("vigil.chat.inbound")

# Slack names message subscriptions by where the message was posted (``event.channel_type``).
_MESSAGE_SUBSCRIPTIONS = {
    "im": "message.im",
    "mpim": "message.mpim",
    "channel": "message.channels",
    "group": "message.groups",
}


@dataclass(frozen=True)
class InboundEvent:
    """A newly recorded ``event_callback``; ``event`` is the inner Slack event object."""

    connection_uuid: uuid.UUID
    organization_uuid: uuid.UUID
    event_id: str
    event_type: str
    event: dict[str, Any]
    payload: dict[str, Any]


@dataclass(frozen=True)
class InboundInteraction:
    """A newly recorded interaction; for ``block_actions`` the fields come from the first action."""

    connection_uuid: uuid.UUID
    organization_uuid: uuid.UUID
    interaction_type: str
    interaction_key: str
    action_id: str
    action_value: str
    user_id: str
    channel_id: str
    message_ts: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class EventOutcome:
    """What E4 answers: the challenge for ``url_verification``, else a plain acknowledgement."""

    challenge: str | None = None
    duplicate: bool = False


EventHandler = Callable[[Session, InboundEvent], None]
InteractionHandler = Callable[[Session, InboundInteraction], None]

_event_handlers: dict[str, list[EventHandler]] = {}
_interaction_handlers: dict[str, list[InteractionHandler]] = {}


def register_event_handler(event_type: str, handler: EventHandler) -> EventHandler:
    """Call ``handler(session, event)`` for each new event of this subscription name (e.g. ``message.im``).

    It runs inside the transaction that records the event: if it raises, nothing is recorded and Slack's
    retry delivers it again. Messages written by a bot (``bot_id``) are recorded but not dispatched.
    Registering the same handler twice is a no-op.
    """
    handlers = _event_handlers.setdefault(event_type, [])
    if handler not in handlers:
        handlers.append(handler)
    return handler


def register_interaction_handler(interaction_type: str, handler: InteractionHandler) -> InteractionHandler:
    """Call ``handler(session, interaction)`` for each new interaction of this type (e.g. ``block_actions``)."""
    handlers = _interaction_handlers.setdefault(interaction_type, [])
    if handler not in handlers:
        handlers.append(handler)
    return handler


def unregister_event_handler(event_type: str, handler: EventHandler) -> None:
    if handler in _event_handlers.get(event_type, []):
        _event_handlers[event_type].remove(handler)


def unregister_interaction_handler(interaction_type: str, handler: InteractionHandler) -> None:
    if handler in _interaction_handlers.get(interaction_type, []):
        _interaction_handlers[interaction_type].remove(handler)


# --- verification ---------------------------------------------------------------------------------------------


def verify(
    db: Database, box: SecretBox, token: str | None, headers: Mapping[str, str], body: bytes
) -> VerifiedConnection:
    """The Slack connection the token names, if the request is signed with its signing secret; else 401."""
    return chat_inbound.verify(db, box, SLACK_INTEGRATION_ID, token, headers, body)


# --- E4 events ------------------------------------------------------------------------------------------------


def subscription_name(event: Mapping[str, Any]) -> str:
    """``message`` + ``channel_type`` becomes Slack's subscription name (``message.im``); others stay as is."""
    event_type = str(event.get("type") or "unknown")
    if event_type == "message":
        return _MESSAGE_SUBSCRIPTIONS.get(str(event.get("channel_type") or ""), event_type)
    return event_type


def _insert_once(session: Session, table: Any, key: tuple[str, str], values: dict[str, Any]) -> bool:
    """Insert unless the (connection, key) row exists; True when this call inserted it."""
    statement = (
        dialect_insert(session, table)
        .values(**values)
        .on_conflict_do_nothing(index_elements=[table.connection_uuid, getattr(table, key[0])])
        .returning(table.id)
    )
    return session.execute(statement).scalar_one_or_none() is not None


def handle_event(
    db: Database, box: SecretBox, receive: ReceiveDelivery, token: str | None, headers: Mapping[str, str], body: bytes
) -> EventOutcome:
    verified = verify(db, box, token, headers, body)
    payload = json_object(body, "event body")
    kind = payload.get("type")
    if kind == "url_verification":
        logger.info("chat url verification connection=%s", verified.connection_uuid)
        return EventOutcome(challenge=str(payload.get("challenge", "")))
    if kind != "event_callback":
        logger.info("chat delivery ignored type=%s connection=%s", kind, verified.connection_uuid)
        return EventOutcome()
    event = payload.get("event")
    event_id = payload.get("event_id")
    if not isinstance(event, dict) or not isinstance(event_id, str) or not event_id:
        raise ValidationFailed("An event_callback needs an event object and an event_id.")
    inbound = InboundEvent(
        connection_uuid=verified.connection_uuid,
        organization_uuid=verified.organization_uuid,
        event_id=event_id,
        event_type=subscription_name(event),
        event=event,
        payload=payload,
    )

    def record(session: Session) -> ChatDelivery:
        recorded = _insert_once(
            session,
            ChatEvent,
            ("event_id", event_id),
            {
                "connection_uuid": inbound.connection_uuid,
                "event_id": event_id,
                "event_type": inbound.event_type,
                "received_at": epoch_now(),
                "payload": body.decode("utf-8"),
            },
        )
        if not recorded:
            return ChatDelivery(new=False)
        # Bot messages (our own), edits and deletions (subtypes) are not a person answering.
        if event.get("bot_id") or event.get("subtype"):
            return ChatDelivery(new=True)
        for handler in _event_handlers.get(inbound.event_type, []):
            handler(session, inbound)
        return ChatDelivery.carrying(SLACK_CHAT.parse_answer(inbound.connection_uuid, inbound.event_type, event))

    recorded = receive(record).new
    logger.info(
        "chat event %s event_id=%s type=%s connection=%s retry=%s reason=%s",
        "recorded" if recorded else "duplicate",
        event_id,
        inbound.event_type,
        inbound.connection_uuid,
        headers.get(RETRY_NUM_HEADER, "-"),
        headers.get(RETRY_REASON_HEADER, "-"),
    )
    return EventOutcome(duplicate=not recorded)


# --- E5 interactions ------------------------------------------------------------------------------------------


def interaction_key(payload: Mapping[str, Any]) -> str:
    """Same press, same key: message ts + first action id + user + action ts, hashed."""
    container = as_object(payload.get("container"))
    first = first_action(payload)
    user = as_object(payload.get("user"))
    parts = (
        str(container.get("message_ts", "")),
        str(first.get("action_id", "")),
        str(user.get("id", "")),
        str(first.get("action_ts", "")),
    )
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _interaction_payload(body: bytes) -> dict[str, Any]:
    try:
        form = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except UnicodeDecodeError:
        raise ValidationFailed("The interaction body is not UTF-8 form data.") from None
    raw = form.get("payload")
    if not raw:
        raise ValidationFailed("The interaction body has no payload field.")
    return json_object(raw[0], "interaction payload")


def handle_interaction(
    db: Database, box: SecretBox, receive: ReceiveDelivery, token: str | None, headers: Mapping[str, str], body: bytes
) -> bool:
    """True when the interaction was new (recorded and dispatched), False for a duplicate or an ignored type."""
    verified = verify(db, box, token, headers, body)
    payload = _interaction_payload(body)
    kind = str(payload.get("type") or "")
    if kind != "block_actions":
        logger.info("chat interaction ignored type=%s connection=%s", kind or "-", verified.connection_uuid)
        return False
    first = first_action(payload)
    container = as_object(payload.get("container"))
    user = as_object(payload.get("user"))
    inbound = InboundInteraction(
        connection_uuid=verified.connection_uuid,
        organization_uuid=verified.organization_uuid,
        interaction_type=kind,
        interaction_key=interaction_key(payload),
        action_id=str(first.get("action_id", "")),
        action_value=str(first.get("value", "")),
        user_id=str(user.get("id", "")),
        channel_id=interaction_channel(payload),
        message_ts=str(container.get("message_ts", "")),
        payload=payload,
    )

    def record(session: Session) -> ChatDelivery:
        recorded = _insert_once(
            session,
            ChatInteraction,
            ("interaction_key", inbound.interaction_key),
            {
                "connection_uuid": inbound.connection_uuid,
                "interaction_key": inbound.interaction_key,
                "interaction_type": kind,
                "action_id": inbound.action_id[:255],
                "user_id": inbound.user_id[:64],
                "message_ts": inbound.message_ts[:64],
                "received_at": epoch_now(),
                "payload": json.dumps(payload, sort_keys=True),
            },
        )
        if not recorded:
            return ChatDelivery(new=False)
        for handler in _interaction_handlers.get(kind, []):
            handler(session, inbound)
        return ChatDelivery.carrying(SLACK_CHAT.parse_answer(inbound.connection_uuid, kind, payload))

    recorded = receive(record).new
    logger.info(
        "chat interaction %s type=%s action=%s connection=%s",
        "recorded" if recorded else "duplicate",
        kind,
        inbound.action_id,
        inbound.connection_uuid,
    )
    return recorded
