"""Organization facts: what an organization told Vigil about itself (authorised scanners, VPN egress, approved
tools, change windows, VIP and service accounts), each vouched for by an owner until it expires."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import AutoIncrementId, Base


class OrganizationFact(Base):
    __tablename__ = "organization_facts"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    fact_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True, default=uuid.uuid4)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE")
    )
    kind: Mapped[str] = mapped_column(String(40))
    value: Mapped[str] = mapped_column(String(320))
    scope: Mapped[str | None] = mapped_column(String(500))
    reason: Mapped[str] = mapped_column(Text)
    owner: Mapped[str] = mapped_column(String(320))
    created_by: Mapped[str] = mapped_column(String(320))
    created_at: Mapped[int] = mapped_column(BigInteger)
    modified_at: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[int] = mapped_column(BigInteger)
    # Change windows only: when the change may happen (compared with the alert's own event times).
    window_start: Mapped[int | None] = mapped_column(BigInteger)
    window_end: Mapped[int | None] = mapped_column(BigInteger)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger)

    # The engine reads an organization's unexpired facts before every analysis; the page lists them by kind.
    __table_args__ = (Index("ix_organization_facts_org_expires", "organization_uuid", "expires_at"),)


class OrganizationFactEvent(Base):
    """Who changed a fact, when, and how: its creation, each changed field (from, to) and its revocation."""

    __tablename__ = "organization_fact_events"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    fact_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organization_facts.fact_uuid", ondelete="CASCADE"), index=True
    )
    at: Mapped[int] = mapped_column(BigInteger)
    actor: Mapped[str] = mapped_column(String(320))
    action: Mapped[str] = mapped_column(String(20))
    field: Mapped[str | None] = mapped_column(String(40))
    from_value: Mapped[str | None] = mapped_column(Text)
    to_value: Mapped[str | None] = mapped_column(Text)
