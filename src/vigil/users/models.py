"""Console users, the organizations they are assigned to, and their server-side sign-in sessions."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, Boolean, ForeignKey, String, Uuid, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from vigil.db.base import Base


class ConsoleUser(Base):
    __tablename__ = "console_users"

    user_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    email: Mapped[str] = mapped_column(String(320), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16))
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[int] = mapped_column(BigInteger)
    modified_at: Mapped[int] = mapped_column(BigInteger)
    last_login_at: Mapped[int | None] = mapped_column(BigInteger)
    disabled_at: Mapped[int | None] = mapped_column(BigInteger)
    # Set when an admin chose the password (invitation, reset): the user picks their own after signing in.
    must_change_password: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    organizations: Mapped[list[UserOrganization]] = relationship(cascade="all, delete-orphan", lazy="selectin")


class UserOrganization(Base):
    """Analysts and viewers see only the organizations listed here; admins see all."""

    __tablename__ = "console_user_organizations"

    user_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("console_users.user_uuid", ondelete="CASCADE"), primary_key=True
    )
    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE"), primary_key=True
    )


class ConsoleSession(Base):
    """A signed-in browser. Only a hash of the cookie's token is stored, so a leaked table opens no session."""

    __tablename__ = "console_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("console_users.user_uuid", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[int] = mapped_column(BigInteger)
    expires_at: Mapped[int] = mapped_column(BigInteger)
