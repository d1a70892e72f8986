"""The ``connections`` table: one integration instance of one organization, secrets encrypted at rest."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import Base


class Connection(Base):
    __tablename__ = "connections"

    connection_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE")
    )
    integration_id: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(120))
    description: Mapped[str] = mapped_column(Text, default="")
    auth_method: Mapped[str | None] = mapped_column(String(64))
    plain_values: Mapped[str] = mapped_column(Text, default="{}")
    """Non-secret field values as a JSON object."""
    secret_values: Mapped[str] = mapped_column(Text)
    """One Fernet token of a JSON object holding every secret field value."""
    expires_at: Mapped[int | None] = mapped_column(BigInteger)
    webhook_token: Mapped[str] = mapped_column(String(64), unique=True)
    last_test_ok: Mapped[bool | None] = mapped_column(Boolean)
    last_test_at: Mapped[int | None] = mapped_column(BigInteger)
    last_test_status_code: Mapped[int | None] = mapped_column(Integer)
    last_test_cause: Mapped[str | None] = mapped_column(Text)
    last_test_remedy: Mapped[str | None] = mapped_column(Text)
    last_test_detail: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[int] = mapped_column(BigInteger)
    modified_at: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(200))

    __table_args__ = (
        UniqueConstraint("organization_uuid", "name", name="uq_connections_organization_uuid_name"),
        Index("ix_connections_org_integration", "organization_uuid", "integration_id"),
    )
