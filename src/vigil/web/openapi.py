"""OpenAPI documentation of the one error shape, shared by every router."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from vigil.alerts.schemas import ErrorBody


class ErrorEnvelope(BaseModel):
    error: ErrorBody


RETRY_AFTER_HEADER: dict[str, Any] = {
    "Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer"}}
}

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorEnvelope, "description": description}
    | ({"headers": RETRY_AFTER_HEADER} if status in (429, 503) else {})
    for status, description in {
        400: "Malformed JSON",
        401: "Missing, invalid, revoked or expired API key",
        403: "Organization not allowed for this API key",
        413: "Body or alert_content too large",
        415: "Content-Type is not application/json",
        422: "Validation failed; details name the fields",
        429: "Rate limit exceeded; see Retry-After",
        503: "Database unavailable; see Retry-After",
    }.items()
}
