"""Inbound Slack deliveries, one row each, so a retried event or a double click is processed once."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, ForeignKey, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import AutoIncrementId, Base


class ChatEvent(Base):
    """An Events API ``event_callback`` (E4), keyed by Slack's ``event_id`` (the same on every retry)."""

    __tablename__ = "chat_events"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    connection_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connections.connection_uuid", ondelete="CASCADE")
    )
    event_id: Mapped[str] = mapped_column(String(128))
    event_type: Mapped[str] = mapped_column(String(64))
    """Subscription name, e.g. ``message.im`` for a direct message to the bot."""
    received_at: Mapped[int] = mapped_column(BigInteger)
    payload: Mapped[str] = mapped_column(Text)
    """The whole delivery as received (JSON)."""

    __table_args__ = (UniqueConstraint("connection_uuid", "event_id", name="uq_chat_events_connection_event"),)


class ChatInteraction(Base):
    """An interactivity delivery (E5), keyed by a hash of message ts, action id, user and action ts."""

    __tablename__ = "chat_interactions"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    connection_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connections.connection_uuid", ondelete="CASCADE")
    )
    interaction_key: Mapped[str] = mapped_column(String(64))
    interaction_type: Mapped[str] = mapped_column(String(64))
    action_id: Mapped[str] = mapped_column(String(255), default="")
    user_id: Mapped[str] = mapped_column(String(64), default="")
    message_ts: Mapped[str] = mapped_column(String(64), default="")
    received_at: Mapped[int] = mapped_column(BigInteger)
    payload: Mapped[str] = mapped_column(Text)
    """The decoded ``payload`` form field (JSON)."""

    __table_args__ = (
        UniqueConstraint("connection_uuid", "interaction_key", name="uq_chat_interactions_connection_key"),
    )
