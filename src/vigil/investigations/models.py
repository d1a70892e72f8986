"""Investigation attempts, their recorded steps (the evidence), and worker heartbeats."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import AutoIncrementId, Base


class InvestigationAttempt(Base):
    """One run of an alert's investigation; attempt n is workflow `<alert_uuid>` or `<alert_uuid>:retry-n`."""

    __tablename__ = "investigation_attempts"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    alert_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("alerts.alert_uuid", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    workflow_id: Mapped[str] = mapped_column(String(120))
    playbook_uuid: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    playbook_version: Mapped[int | None] = mapped_column(Integer)
    entities: Mapped[str] = mapped_column(Text, default="{}")
    category: Mapped[str | None] = mapped_column(String(40))
    started_at: Mapped[int] = mapped_column(BigInteger)
    finished_at: Mapped[int | None] = mapped_column(BigInteger)
    outcome: Mapped[str | None] = mapped_column(String(20))
    failure_reason: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (UniqueConstraint("alert_uuid", "attempt"),)


class InvestigationStep(Base):
    """What one playbook step did: inputs, output, duration, error. Unique per attempt and position,
    so a step replayed after a crash overwrites its row instead of adding a duplicate."""

    __tablename__ = "investigation_steps"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    alert_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("alerts.alert_uuid", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(20))
    skill_id: Mapped[str | None] = mapped_column(String(200))
    connection_name: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(20))
    inputs: Mapped[str] = mapped_column(Text, default="{}")
    output: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    #: The failure's stable name, for `vigil_skill_call_errors` by cause (NULL before migration 0016).
    error_code: Mapped[str | None] = mapped_column(String(64))
    started_at: Mapped[int] = mapped_column(BigInteger)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (UniqueConstraint("alert_uuid", "attempt", "position"),)


class WorkerHeartbeat(Base):
    """One row per engine process start (its DBOS executor id), stamped while it lives. A row whose process is
    provably gone (same host, pid no longer that process) or that went stale is claimed, and its workflows resumed.
    """

    __tablename__ = "worker_heartbeats"

    executor_id: Mapped[str] = mapped_column(String(140), primary_key=True)
    #: The stable name (VIGIL_EXECUTOR_ID / --id, default <host>-<role>) the executor id starts with.
    name: Mapped[str] = mapped_column(String(120))
    hostname: Mapped[str] = mapped_column(String(200))
    #: Kernel boot id + pid namespace: pids of two rows are comparable only where this matches (None: no /proc).
    host_key: Mapped[str | None] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    #: The process's start time in clock ticks since boot, so a reused pid is not mistaken for the old process.
    pid_started: Mapped[int | None] = mapped_column(BigInteger)
    started_at: Mapped[int] = mapped_column(BigInteger)
    last_seen: Mapped[int] = mapped_column(BigInteger)


class ChatCheckpoint(Base):
    """A question put to a person in chat while a playbook waits. The row, not the wake-up message, is the
    truth: answers are conditional updates from `waiting`, so a second press or a late reply changes nothing."""

    __tablename__ = "chat_checkpoints"

    checkpoint_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    alert_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("alerts.alert_uuid", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    position: Mapped[int] = mapped_column(Integer)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(Uuid)
    connection_uuid: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("connections.connection_uuid", ondelete="SET NULL")
    )
    connection_name: Mapped[str] = mapped_column(String(200))
    waiting_workflow_id: Mapped[str] = mapped_column(String(200))
    asked_email: Mapped[str] = mapped_column(String(320))
    question: Mapped[str] = mapped_column(Text)
    provider_id: Mapped[str] = mapped_column(String(64))
    """The chat integration that asked (its id; the connection may be deleted since)."""
    recipient_id: Mapped[str | None] = mapped_column(String(255))
    recipient_name: Mapped[str | None] = mapped_column(String(200))
    conversation_id: Mapped[str | None] = mapped_column(String(255))
    """Where the question was posted: a written reply there from the recipient answers it."""
    message_ref: Mapped[str | None] = mapped_column(Text)
    """The provider's reference to the question message (JSON object, opaque here), to rewrite it."""
    posted_at: Mapped[str | None] = mapped_column(String(64))
    """The question's exact posting time as the provider stamps it (decimal Unix seconds)."""
    status: Mapped[str] = mapped_column(String(20))
    answer: Mapped[str | None] = mapped_column(String(20))
    answered_by_account: Mapped[str | None] = mapped_column(String(200))
    answered_via: Mapped[str | None] = mapped_column(String(20))
    answered_at: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[int | None] = mapped_column(BigInteger)
    timeout_seconds: Mapped[int | None] = mapped_column(Integer)
    """The wait resolved when the question was asked (step, organization, console or environment)."""
    timeout_source: Mapped[str | None] = mapped_column(String(20))

    __table_args__ = (
        UniqueConstraint("alert_uuid", "attempt", "position"),
        Index("ix_chat_checkpoints_waiting_user", "connection_uuid", "recipient_id", "status"),
    )


class ChatEarlyAnswer(Base):
    """An answer that arrived while its question was still being sent (the checkpoint `asking`): the buttons
    are live as soon as the chat product posts the message, before Vigil knows who was asked. Recording the
    question (`mark_asked`) applies the asked user's answer and discards the rest.

    A button press names its checkpoint; a yes/no reply does not, so it is kept by connection, user and
    conversation (for a few minutes) and matched once the question's recipient and conversation are known."""

    __tablename__ = "chat_early_answers"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    connection_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("connections.connection_uuid", ondelete="CASCADE")
    )
    checkpoint_uuid: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("chat_checkpoints.checkpoint_uuid", ondelete="CASCADE")
    )
    answered_via: Mapped[str] = mapped_column(String(20))
    answer: Mapped[str] = mapped_column(String(20))
    user_id: Mapped[str] = mapped_column(String(255))
    user_label: Mapped[str] = mapped_column(String(200))
    conversation_id: Mapped[str] = mapped_column(String(255))
    posted_at: Mapped[str | None] = mapped_column(String(64))
    """When the reply was posted, as the provider stamps it (null for a button press)."""
    received_at: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (
        Index("ix_chat_early_answers_checkpoint_uuid", "checkpoint_uuid"),
        Index("ix_chat_early_answers_reply", "connection_uuid", "user_id", "conversation_id"),
    )


class AiExchange(Base):
    """One model request or tool call of an investigation's AI (the audit trail shown on the case).

    Unique per (alert, attempt, stage, seq): a call replayed after a crash overwrites its row.
    """

    __tablename__ = "ai_exchanges"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    alert_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("alerts.alert_uuid", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    stage: Mapped[str] = mapped_column(String(20))
    seq: Mapped[int] = mapped_column(Integer)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, index=True)
    kind: Mapped[str] = mapped_column(String(20))
    model: Mapped[str] = mapped_column(String(200))
    request: Mapped[str] = mapped_column(Text)
    response: Mapped[str | None] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    error_kind: Mapped[str | None] = mapped_column(String(40))
    retries: Mapped[str] = mapped_column(Text, default="[]")
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float | None] = mapped_column(Float)
    started_at: Mapped[float] = mapped_column(Float)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (UniqueConstraint("alert_uuid", "attempt", "stage", "seq"),)
