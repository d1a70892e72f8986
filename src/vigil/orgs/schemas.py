"""Request and response shapes for organizations and providers (E2, E3)."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict

ORGANIZATION_CODE_PATTERN = r"^[A-Z0-9]{2,16}$"
PROVIDER_SLUG_PATTERN = r"^[a-z][a-z0-9_]{1,63}$"
MAX_NAME_LENGTH = 200


class OrganizationOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    organization_code: str
    organization_uuid: uuid.UUID
    name: str


class OrganizationList(BaseModel):
    organizations: list[OrganizationOut]


class ProviderOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    alert_provider: str
    name: str


class ProviderList(BaseModel):
    providers: list[ProviderOut]


class OrganizationSummary(BaseModel):
    """One row of the console's organizations list, with cheap activity counts."""

    organization_uuid: uuid.UUID
    organization_code: str
    name: str
    created_at: int
    modified_at: int
    alerts: int
    cases: int
    connections: int
