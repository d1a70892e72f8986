"""Investigator playbooks: one per (organization, provider, alert_type), with immutable versions; other types
of the same provider may be mapped to a playbook (`PlaybookAlertType`)."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, ForeignKey, Integer, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import AutoIncrementId, Base


class Playbook(Base):
    __tablename__ = "playbooks"

    playbook_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE")
    )
    organization_code: Mapped[str] = mapped_column(String(16))
    alert_provider: Mapped[str] = mapped_column(String(64))
    alert_type: Mapped[str] = mapped_column(String(256))
    name: Mapped[str] = mapped_column(String(600))
    current_version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[int] = mapped_column(BigInteger)
    modified_at: Mapped[int] = mapped_column(BigInteger)

    # The database, not application code, guarantees one playbook per alert type under concurrency.
    __table_args__ = (UniqueConstraint("organization_uuid", "alert_provider", "alert_type"),)


class PlaybookVersion(Base):
    """Steps are stored as validated JSON (`PlaybookDefinition`); edits add a version, never rewrite one."""

    __tablename__ = "playbook_versions"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    playbook_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("playbooks.playbook_uuid", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    definition: Mapped[str] = mapped_column(Text)
    created_at: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(200))
    note: Mapped[str] = mapped_column(Text, default="")

    __table_args__ = (UniqueConstraint("playbook_uuid", "version"),)


class PlaybookAlertType(Base):
    """An alert type served by another type's playbook (same organization and provider), so similar types share one.

    Resolution looks here first, then at the type's own playbook; deleting the row restores that.
    """

    __tablename__ = "playbook_alert_types"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE")
    )
    alert_provider: Mapped[str] = mapped_column(String(64))
    alert_type: Mapped[str] = mapped_column(String(256))
    playbook_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("playbooks.playbook_uuid", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(200))

    # One playbook per alert type, whichever way it is reached.
    __table_args__ = (UniqueConstraint("organization_uuid", "alert_provider", "alert_type"),)
