"""Who is calling: the authenticated principal, and API-key shapes for the CLI and console."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel

from vigil.errors import Forbidden


@dataclass(frozen=True)
class Principal:
    """An authenticated API key or console user and the organizations it may touch."""

    actor_uuid: uuid.UUID
    name: str
    all_organizations: bool
    organization_uuids: frozenset[uuid.UUID]
    described_as: str = "This API key"  # how refusals name the caller ("Your account" in the console)
    kind: str = "api_key"  # "user" for console users; timelines record `<kind>:<name>`

    @property
    def actor(self) -> str:
        return f"{self.kind}:{self.name}"

    @property
    def organization_scope(self) -> frozenset[uuid.UUID] | None:
        """None means every organization; otherwise the allowed set."""
        return None if self.all_organizations else self.organization_uuids

    def can_access(self, organization_uuid: uuid.UUID) -> bool:
        return self.all_organizations or organization_uuid in self.organization_uuids

    def require_access(self, organization_uuid: uuid.UUID, organization_code: str) -> None:
        if not self.can_access(organization_uuid):
            raise self.forbidden(organization_code)

    def forbidden(self, organization_code: str) -> Forbidden:
        return organization_forbidden(organization_code, self.described_as)


def organization_forbidden(organization_code: str, caller: str = "This API key") -> Forbidden:
    return Forbidden(
        f"{caller} is not allowed to use organization {organization_code}.",
        code="organization_forbidden",
        details=[{"field": "organization_code", "value": organization_code}],
    )


class ApiKeyStatus(StrEnum):
    ACTIVE = "active"
    EXPIRED = "expired"
    REVOKED = "revoked"


class ApiKeyOut(BaseModel):
    key_uuid: uuid.UUID
    name: str
    prefix: str
    created_by: str
    created_by_label: str  # the creating console user's email, or the stored actor (e.g. "cli")
    status: ApiKeyStatus
    organizations: list[str] | None
    created_at: int
    expires_at: int | None
    revoked_at: int | None
    last_used_at: int | None


class ApiKeyCreated(ApiKeyOut):
    """Returned once, at creation: the only time the full key is ever shown."""

    api_key: str
