"""Request and response shapes of organization facts (`/serviceapi/organizations/{code}/facts`)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from vigil.errors import ValidationFailed, field_errors
from vigil.evidence.facts import FactKind
from vigil.input_types import EpochSeconds, Text

MAX_VALUE_LENGTH = 320  # organization_facts.value
MAX_SCOPE_LENGTH = 500  # organization_facts.scope
MAX_REASON_LENGTH = 2000
MAX_OWNER_LENGTH = 320


def _epoch(value: Any) -> Any:
    """ISO 8601 text as epoch seconds (a date is midnight UTC, a time without an offset is UTC); numbers pass."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise PydanticCustomError("moment", "Give Unix epoch seconds or an ISO 8601 date or time.") from None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


#: A moment as the API stores it (epoch seconds, UTC), also accepted as ISO 8601 text ("2027-03-01").
Moment = Annotated[EpochSeconds, BeforeValidator(_epoch)]


class FactStatus(StrEnum):
    """Only an active fact is served to the analyst; an expired or revoked one is kept for the record."""

    ACTIVE = "active"
    EXPIRED = "expired"
    REVOKED = "revoked"


_VALUE_HELP = (
    "An IP address or CIDR range for authorised_scanner, vpn_egress, office_network and ci_network; a tool or "
    "executable name for approved_tool; a change reference for change_window; an account (e-mail or user name) "
    "for vip_account and service_account."
)
_EXPIRES_HELP = (
    "Epoch seconds (or ISO 8601, UTC unless an offset is given): when the fact stops counting. Required, at most "
    "two years ahead."
)
_WINDOW_HELP = "change_window only (and required there): epoch seconds or ISO 8601; the end must be after the start."


class FactCreate(BaseModel):
    """POST: a new fact; nothing is permanent, so `expires_at` is required and must lie in the future."""

    model_config = ConfigDict(extra="forbid")

    kind: FactKind = Field(description="What the fact says about the organization.")
    value: Text = Field(min_length=1, max_length=MAX_VALUE_LENGTH, description=_VALUE_HELP)
    scope: Text | None = Field(
        default=None,
        max_length=MAX_SCOPE_LENGTH,
        description="Where the fact holds, in words (e.g. 'build hosts only', 'weekly external scan'); optional.",
    )
    reason: Text = Field(min_length=1, max_length=MAX_REASON_LENGTH, description="Why it is true; cited with it.")
    owner: Text = Field(max_length=MAX_OWNER_LENGTH, description="E-mail of the person who vouches for the fact.")
    expires_at: Moment = Field(description=_EXPIRES_HELP)
    window_start: Moment | None = Field(default=None, description=_WINDOW_HELP)
    window_end: Moment | None = Field(default=None, description=_WINDOW_HELP)

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> FactCreate:
        """From a form or the command line (blank optional fields left out): the API's 422 as a `ValidationFailed`
        naming the first field, so the console and the CLI show the refusal the API would give."""
        try:
            return cls.model_validate({name: value for name, value in fields.items() if value not in (None, "")})
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "fact"
            raise ValidationFailed(f"{where}: {first['msg']}", details=field_errors(error.errors())) from None


class FactUpdate(BaseModel):
    """PATCH: only the fields sent change (`scope: null` clears it). Kind and value never change: a different
    address or account is a different fact, recorded on its own. `expires_at` in the past ends the fact as of
    then (it is listed as expired)."""

    model_config = ConfigDict(extra="forbid")

    reason: Text | None = Field(default=None, min_length=1, max_length=MAX_REASON_LENGTH)
    scope: Text | None = Field(default=None, max_length=MAX_SCOPE_LENGTH)
    owner: Text | None = Field(default=None, max_length=MAX_OWNER_LENGTH)
    expires_at: Moment | None = Field(default=None, description="At most two years ahead.")
    window_start: Moment | None = Field(default=None, description=_WINDOW_HELP)
    window_end: Moment | None = Field(default=None, description=_WINDOW_HELP)


class FactOut(BaseModel):
    fact_uuid: uuid.UUID
    organization_code: str
    kind: FactKind
    value: str
    scope: str | None
    reason: str
    owner: str
    created_by: str = Field(description="Who recorded it: `api_key:<name>`, `user:<email>` or `cli`.")
    created_at: int
    modified_at: int
    expires_at: int
    window_start: int | None
    window_end: int | None
    revoked_at: int | None
    status: FactStatus = Field(description="`active` facts are what the analyst reads; the others are the record.")


class FactEventOut(BaseModel):
    """One recorded change: `created`, `changed` (with the field, from and to) or `revoked`."""

    model_config = ConfigDict(from_attributes=True)

    at: int
    actor: str
    action: str
    field: str | None
    from_value: str | None
    to_value: str | None


class FactDetail(FactOut):
    history: list[FactEventOut]


class FactList(BaseModel):
    facts: list[FactOut]
