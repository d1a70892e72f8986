"""Alert tables: the alert itself, its gap-free id counter, idempotency records and timeline."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import AutoIncrementId, Base


class Alert(Base):
    __tablename__ = "alerts"

    # Internal monotonic key: gives "newest first" ordering and cheap keyset pagination.
    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    alert_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True, default=uuid.uuid4)
    alert_id: Mapped[str] = mapped_column(String(120), unique=True)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("organizations.organization_uuid"))
    organization_code: Mapped[str] = mapped_column(String(16))
    alert_provider: Mapped[str] = mapped_column(String(64), ForeignKey("providers.alert_provider"))
    alert_type: Mapped[str | None] = mapped_column(String(256))
    alert_content: Mapped[str] = mapped_column(Text)
    created_at: Mapped[int] = mapped_column(BigInteger)
    created_at_source: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[uuid.UUID] = mapped_column(Uuid)
    modified_at: Mapped[int] = mapped_column(BigInteger)
    investigation_status: Mapped[int] = mapped_column(Integer, default=0)
    investigation_retry_count: Mapped[int] = mapped_column(Integer, default=0)
    case_id: Mapped[str | None] = mapped_column(String(40))
    investigator: Mapped[str | None] = mapped_column(String(600))
    completed_at: Mapped[int | None] = mapped_column(BigInteger)
    failure_reason: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (
        Index("ix_alerts_org_id", "organization_code", "id"),
        # Lists are scoped by organization_uuid (tenancy and the organization filter), newest first.
        Index("ix_alerts_org_uuid_id", "organization_uuid", "id"),
        Index("ix_alerts_status_id", "investigation_status", "id"),
        Index("ix_alerts_provider_id", "alert_provider", "id"),
        Index("ix_alerts_type_id", "alert_type", "id"),
        Index("ix_alerts_created_at", "created_at"),
    )


class AlertCounter(Base):
    """Last sequence number used per (organization, provider); bumped in the insert's transaction."""

    __tablename__ = "alert_counters"

    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE"), primary_key=True
    )
    alert_provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    last_value: Mapped[int] = mapped_column(BigInteger, default=0)


class IdempotencyRecord(Base):
    """Remembers which alert an `Idempotency-Key` produced, scoped to the API key that sent it."""

    __tablename__ = "idempotency_records"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    api_key_uuid: Mapped[uuid.UUID] = mapped_column(Uuid)
    idempotency_key: Mapped[str] = mapped_column(String(128))
    request_hash: Mapped[str] = mapped_column(String(64))
    alert_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("alerts.alert_uuid", ondelete="CASCADE"))
    created_at: Mapped[int] = mapped_column(BigInteger, index=True)

    __table_args__ = (UniqueConstraint("api_key_uuid", "idempotency_key"),)


class AlertEvent(Base):
    """The alert's timeline: every status change and action, with time and actor."""

    __tablename__ = "alert_events"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    alert_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("alerts.alert_uuid", ondelete="CASCADE"), index=True)
    at: Mapped[int] = mapped_column(BigInteger)
    actor: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(40))
    from_status: Mapped[int | None] = mapped_column(Integer)
    to_status: Mapped[int | None] = mapped_column(Integer)
    message: Mapped[str] = mapped_column(Text, default="")
