"""API keys: only a SHA-256 hash and a short visible prefix are stored, never the key."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, Boolean, ForeignKey, String, Uuid
from sqlalchemy.orm import Mapped, mapped_column, relationship

from vigil.db.base import Base


class ApiKey(Base):
    __tablename__ = "api_keys"

    key_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    name: Mapped[str] = mapped_column(String(200))
    prefix: Mapped[str] = mapped_column(String(32))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[str] = mapped_column(String(200))
    all_organizations: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[int | None] = mapped_column(BigInteger)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger)
    last_used_at: Mapped[int | None] = mapped_column(BigInteger)

    organizations: Mapped[list[ApiKeyOrganization]] = relationship(cascade="all, delete-orphan", lazy="selectin")


class ApiKeyOrganization(Base):
    """Which organizations a restricted key may use."""

    __tablename__ = "api_key_organizations"

    key_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("api_keys.key_uuid", ondelete="CASCADE"), primary_key=True
    )
    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE"), primary_key=True
    )
