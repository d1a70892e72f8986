"""Tenancy tables: organizations (tenants), providers (alert source systems), and the service-wide settings an
admin changes in the console."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, Boolean, Integer, String, Text, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import Base


class Organization(Base):
    __tablename__ = "organizations"

    organization_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    organization_code: Mapped[str] = mapped_column(String(16), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[int] = mapped_column(BigInteger)
    modified_at: Mapped[int] = mapped_column(BigInteger)
    checkpoint_timeout_seconds: Mapped[int | None] = mapped_column(Integer)
    """How long this organization's Chat Checkpoints wait; null: the service-wide default."""
    ai_model: Mapped[str | None] = mapped_column(String(200))
    """This organization's investigator model (e.g. a local model for a customer whose alerts stay in-house);
    null: `VIGIL_AI_MODEL`."""
    ai_base_url: Mapped[str | None] = mapped_column(String(500))
    ai_api_key: Mapped[str | None] = mapped_column(Text)
    """Encrypted with the connection-secret key; never returned by the API or shown in the console."""


class Provider(Base):
    __tablename__ = "providers"

    alert_provider: Mapped[str] = mapped_column(String(64), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    built_in: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[int] = mapped_column(BigInteger)


class ServiceSetting(Base):
    """One service-wide setting changed in the console (key → JSON value); a missing key means the
    environment's value applies."""

    __tablename__ = "service_settings"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    modified_at: Mapped[int] = mapped_column(BigInteger)
    modified_by: Mapped[str | None] = mapped_column(String(320))
