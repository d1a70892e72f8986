"""Console user shapes: roles, the signed-in identity, and what the users page lists."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel

from vigil.auth.schemas import Principal


class Role(StrEnum):
    ADMIN = "admin"  # operator staff: every organization, administration pages
    ANALYST = "analyst"  # read/write within assigned organizations
    VIEWER = "viewer"  # read-only within assigned organizations


@dataclass(frozen=True)
class ConsoleIdentity:
    """The signed-in user as the console sees it; `principal` is what domain services check tenancy with."""

    user_uuid: uuid.UUID
    email: str
    name: str
    role: Role
    organization_uuids: frozenset[uuid.UUID]
    must_change_password: bool = False  # signed in with a password an admin set; should choose their own

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN

    @property
    def can_write(self) -> bool:
        return self.role in (Role.ADMIN, Role.ANALYST)

    @property
    def principal(self) -> Principal:
        return Principal(
            actor_uuid=self.user_uuid,
            name=self.email,
            all_organizations=self.is_admin,
            organization_uuids=self.organization_uuids,
            described_as="Your account",
            kind="user",
        )


class UserStatus(StrEnum):
    ACTIVE = "active"
    INVITED = "invited"  # never signed in yet
    DISABLED = "disabled"


class UserOut(BaseModel):
    user_uuid: uuid.UUID
    email: str
    name: str
    role: Role
    organizations: list[str]
    created_at: int
    last_login_at: int | None
    disabled_at: int | None
    must_change_password: bool = False

    @property
    def status(self) -> UserStatus:
        if self.disabled_at is not None:
            return UserStatus.DISABLED
        return UserStatus.INVITED if self.last_login_at is None else UserStatus.ACTIVE


class UserInvited(UserOut):
    """Returned once, at invitation: the only time the one-time password is shown."""

    one_time_password: str
