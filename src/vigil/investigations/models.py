"""Investigation attempts, their recorded steps (the evidence), and worker heartbeats."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, ForeignKey, Integer, String, Text, UniqueConstraint, Uuid
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
    started_at: Mapped[int] = mapped_column(BigInteger)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = (UniqueConstraint("alert_uuid", "attempt", "position"),)


class WorkerHeartbeat(Base):
    """Live workers stamp this; a stale row means the executor died and its workflows are taken over."""

    __tablename__ = "worker_heartbeats"

    executor_id: Mapped[str] = mapped_column(String(120), primary_key=True)
    hostname: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[int] = mapped_column(BigInteger)
    last_seen: Mapped[int] = mapped_column(BigInteger)
