"""Alert request/response shapes. The response carries exactly the seed's 13 fields plus 4."""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from vigil.alerts.constants import MAX_ALERT_TYPE_LENGTH, MAX_BATCH_SIZE, InvestigationStatus
from vigil.input_types import EpochSeconds, Text

_STATUS_MEANINGS = {
    InvestigationStatus.CREATED: "Created: stored; an alert without alert_type stays here and is not investigated",
    InvestigationStatus.SUBMITTED: "Submitted: queued for an investigator",
    InvestigationStatus.IN_PROGRESS: "InProgress: being investigated",
    InvestigationStatus.COMPLETED: "Completed: verdict recorded and case opened (case_id, completed_at)",
    InvestigationStatus.FAILED: (
        "Failed: see failure_reason; re-submitted (5) automatically within VIGIL_MAX_AUTO_RETRIES when the cause "
        "was transient, or by POST /serviceapi/alerts/{alert_ref}/retry"
    ),
}
#: The OpenAPI description of every investigation_status field and filter: the numbers are the seed's public API.
INVESTIGATION_STATUS_DESCRIPTION = "Investigation status. " + "; ".join(
    f"{int(status)} {meaning}" for status, meaning in _STATUS_MEANINGS.items()
)


def _json_value_as_text(value: Any) -> Any:
    """A JSON object or array becomes its compact JSON text (keys in the order sent); a string passes untouched.

    So a sender that posts the alert as JSON rather than as a JSON string gets it stored as the string it would
    have sent, and the size limit and idempotency hash see exactly what is stored.
    """
    if isinstance(value, str):
        return value
    if not isinstance(value, dict | list):
        raise PydanticCustomError(
            "alert_content_type",
            "alert_content must be a string (stored exactly as sent) or a JSON object or array (stored as its "
            "compact JSON text); send other JSON values as a string.",
        )
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=False, allow_nan=False)
    except ValueError:
        raise PydanticCustomError(
            "alert_content_not_json", "alert_content must be valid JSON: NaN and Infinity are not numbers in JSON."
        ) from None
    except RecursionError:
        raise PydanticCustomError(
            "alert_content_too_deep", "alert_content is nested too deeply to store as JSON; send it as a string."
        ) from None


#: alert_content as accepted by E1 and the batch: a string as sent, or JSON serialized to the string stored.
AlertContent = Annotated[
    Text,
    BeforeValidator(_json_value_as_text, json_schema_input_type=str | dict[str, Any] | list[Any]),
]


class AlertCreate(BaseModel):
    """Body of E1. Unknown extra fields are ignored so richer senders keep working."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    organization_code: Text = Field(min_length=1, max_length=16, description="From GET /serviceapi/organizations.")
    alert_content: AlertContent = Field(
        description="The alert body. A string (JSON text is common) is stored exactly as sent. A JSON object or "
        "array is accepted too and stored as its compact JSON text, keys in the order sent "
        '(`{"user": "jane"}` is stored as the string `{"user":"jane"}`); GET returns the stored string. '
        "The size limit (VIGIL_MAX_ALERT_CONTENT_BYTES, 256 KiB by default) counts the stored string's UTF-8 bytes."
    )
    alert_provider: Text = Field(min_length=1, max_length=64, description="From GET /serviceapi/providers.")
    alert_type: Text | None = Field(
        default=None,
        max_length=MAX_ALERT_TYPE_LENGTH,
        description="Required for automatic AI investigation; without it the alert stays Created.",
    )
    created_at_source: EpochSeconds | None = Field(
        default=None, strict=True, description="Unix epoch seconds at the source."
    )

    @field_validator("organization_code")
    @classmethod
    def _upper_code(cls, value: str) -> str:
        return value.strip().upper()

    @field_validator("alert_provider")
    @classmethod
    def _lower_provider(cls, value: str) -> str:
        return value.strip().lower()

    @field_validator("alert_type")
    @classmethod
    def _blank_type_is_none(cls, value: str | None) -> str | None:
        return value if value is None or value.strip() else None


class AlertOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    alert_content: str = Field(description="The alert body as stored: the string sent, or the JSON object's text.")
    alert_id: str
    alert_provider: str
    alert_type: str | None
    alert_uuid: uuid.UUID
    created_at: int
    created_at_source: int
    created_by: uuid.UUID
    investigation_retry_count: int
    investigation_status: int = Field(description=INVESTIGATION_STATUS_DESCRIPTION)
    modified_at: int
    organization_code: str
    organization_uuid: uuid.UUID
    case_id: str | None
    investigator: str | None
    completed_at: int | None
    failure_reason: str | None


class AlertEventOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: int
    actor: str
    kind: str
    from_status: int | None = Field(description="investigation_status before the event (see AlertOut); null if none.")
    to_status: int | None = Field(description="investigation_status after the event; null if unchanged.")
    message: str


class AlertDetail(AlertOut):
    timeline: list[AlertEventOut]


class AlertPage(BaseModel):
    alerts: list[AlertOut]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next (older) page; null at the end.")


class AlertBatchCreate(BaseModel):
    """Items are validated one by one so one bad item does not reject the others."""

    alerts: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_BATCH_SIZE)


class ErrorBody(BaseModel):
    code: str
    message: str
    details: list[dict[str, Any]] = Field(default_factory=list)


class BatchItemResult(BaseModel):
    index: int
    status: int = Field(description="201 created, or the status a single E1 call would have returned.")
    alert: AlertOut | None = None
    error: ErrorBody | None = None


class AlertBatchResult(BaseModel):
    created: int
    failed: int
    results: list[BatchItemResult]


class AlertTypeUpdate(BaseModel):
    """Body of PATCH /serviceapi/alerts/{alert_ref}: give an untyped alert its type, which submits it."""

    model_config = ConfigDict(extra="forbid")

    alert_type: Text = Field(
        min_length=1, max_length=MAX_ALERT_TYPE_LENGTH, description="The alert's type; only settable while it has none."
    )

    @field_validator("alert_type")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("alert_type must not be blank")
        return value.strip()


class AlertFilters(BaseModel):
    organization_code: str | None = None
    alert_provider: str | None = None
    alert_type: str | None = None
    investigation_status: int | None = None
    created_after: int | None = None
    created_before: int | None = None
    q: str | None = Field(default=None, max_length=200)
