"""Alert request/response shapes. The response carries exactly the seed's 13 fields plus 4."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vigil.alerts.constants import MAX_ALERT_TYPE_LENGTH, MAX_BATCH_SIZE
from vigil.input_types import EpochSeconds, Text


class AlertCreate(BaseModel):
    """Body of E1. Unknown extra fields are ignored so richer senders keep working."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=False)

    organization_code: Text = Field(min_length=1, max_length=16, description="From GET /serviceapi/organizations.")
    alert_content: Text = Field(description="Alert body as sent (JSON text is common); stored verbatim.")
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

    alert_content: str
    alert_id: str
    alert_provider: str
    alert_type: str | None
    alert_uuid: uuid.UUID
    created_at: int
    created_at_source: int
    created_by: uuid.UUID
    investigation_retry_count: int
    investigation_status: int
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
    from_status: int | None
    to_status: int | None
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
