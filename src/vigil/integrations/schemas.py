"""Request and response shapes of connections (integration instances). Secret values are never in a response."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vigil.input_types import EpochSeconds, Text

MASK = "••••"
NAME_MAX_LENGTH = 120
DESCRIPTION_MAX_LENGTH = 2000


def mask_secret(value: str) -> str:
    """``••••`` plus the last 4 characters, enough to tell two keys apart; short values show no characters."""
    return MASK + value[-4:] if len(value) >= 12 else MASK


class ConnectionCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    organization_code: Text = Field(description="Organization the connection belongs to, e.g. ACME.")
    integration_id: Text = Field(description="Integration id, as GET /serviceapi/integrations lists them.")
    name: Text = Field(min_length=1, max_length=NAME_MAX_LENGTH, description="Instance name, unique per organization.")
    description: Text = Field(default="", max_length=DESCRIPTION_MAX_LENGTH)
    auth_method: Text | None = Field(
        default=None, description="For integrations with several auth methods: one of its `auth_methods`."
    )
    fields: dict[Text, Text] = Field(
        default_factory=dict, description="Connection field values by field name (see the integration's fields)."
    )
    expires_at: EpochSeconds | None = Field(
        default=None, gt=0, description="When the credentials expire (epoch seconds); an expired connection is unused."
    )


class ConnectionUpdate(BaseModel):
    """PATCH: omitted attributes are kept. In ``fields``, an omitted or empty secret keeps the stored one and
    ``null`` clears a value; ``expires_at: null`` removes the expiry."""

    model_config = ConfigDict(extra="forbid")

    name: Text | None = Field(default=None, min_length=1, max_length=NAME_MAX_LENGTH)
    description: Text | None = Field(default=None, max_length=DESCRIPTION_MAX_LENGTH)
    auth_method: Text | None = None
    fields: dict[Text, Text | None] = Field(default_factory=dict)
    expires_at: EpochSeconds | None = Field(default=None, gt=0)


class ConnectionOut(BaseModel):
    connection_uuid: uuid.UUID
    organization_code: str
    organization_uuid: uuid.UUID
    integration_id: str
    integration_name: str
    name: str
    description: str
    auth_method: str | None
    fields: dict[str, str] = Field(description=f"Field values; secret ones masked as {MASK} + last 4 characters.")
    secret_fields: list[str] = Field(description="Names of the secret fields that have a stored value.")
    expires_at: int | None
    expired: bool
    webhook_token: str = Field(description="Token for this connection's inbound chat URLs (E4/E5 `?token=`).")
    last_test_ok: bool | None
    last_test_at: int | None
    last_test_status_code: int | None
    last_test_cause: str | None
    last_test_remedy: str | None
    last_test_detail: str | None
    created_at: int
    modified_at: int
    created_by: str


class ConnectionList(BaseModel):
    connections: list[ConnectionOut]


class ConnectionTestOut(BaseModel):
    """Result of Authenticate/Test as stored on the connection."""

    connection_uuid: uuid.UUID
    ok: bool
    tested_at: int
    status_code: int | None = None
    cause: str | None = None
    remedy: str | None = None
    detail: str | None = None


class IntegrationCatalog(BaseModel):
    integrations: list[dict[str, Any]] = Field(
        description="Every integration: id, name, description, fields, base URLs (`VIGIL_VENDOR_URLS` keys and "
        "defaults) and skills with input/output JSON schemas."
    )


class SkillParameter(BaseModel):
    """One row of a skill's parameter table, as the console's Skills tab shows it."""

    name: str
    type: str = Field(description='Readable type: "string", "integer", "array of string", "Machine[]", ...')
    required: bool
    description: str = ""
    allowed: list[str] = Field(default_factory=list, description="Allowed values of an enum.")
    notes: list[str] = Field(default_factory=list, description="Default, range, length and format constraints.")


class ParameterTable(BaseModel):
    """The fields of one object type (the skill's input or output, or a type nested in it)."""

    title: str
    description: str = ""
    parameters: list[SkillParameter]


class SkillDoc(BaseModel):
    """A skill as documented on the Skills tab: what it does, what it needs, and its typed inputs and outputs."""

    id: str
    name: str
    purpose: str
    permissions: list[str]
    writes: bool
    inputs: ParameterTable
    input_types: list[ParameterTable] = Field(description="Object and record types the inputs refer to.")
    outputs: ParameterTable
    output_types: list[ParameterTable] = Field(description="Object and record types the outputs refer to.")
