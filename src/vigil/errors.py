"""Typed domain errors. Services raise these; the web layer maps them to the one JSON error shape."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class VigilError(Exception):
    """Base class: carries an HTTP status, a snake_case code, a sentence and structured details.

    A subclass states its status and code in its header, so the errors read as one table."""

    status_code = 400
    code = "bad_request"

    def __init_subclass__(cls, *, status_code: int | None = None, code: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if status_code is not None:
            cls.status_code = status_code
        if code is not None:
            cls.code = code

    def __init__(self, message: str, *, code: str | None = None, details: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.details = details or []
        self.headers: dict[str, str] = {}


class MalformedJSON(VigilError, status_code=400, code="malformed_json"): ...


class Unauthenticated(VigilError, status_code=401, code="unauthenticated"): ...


class Forbidden(VigilError, status_code=403, code="forbidden"): ...


class NotFound(VigilError, status_code=404, code="not_found"): ...


class Conflict(VigilError, status_code=409, code="conflict"): ...


class PayloadTooLarge(VigilError, status_code=413, code="payload_too_large"): ...


class ValidationFailed(VigilError, status_code=422, code="validation_error"): ...


class RateLimited(VigilError, status_code=429, code="rate_limited"):
    def __init__(self, message: str, *, retry_after_seconds: int):
        super().__init__(message)
        self.headers["Retry-After"] = str(retry_after_seconds)


class DatabaseUnavailable(VigilError, status_code=503, code="database_unavailable"):
    def __init__(self, message: str = "The database is unavailable; retry shortly.") -> None:
        super().__init__(message)
        self.headers["Retry-After"] = "5"


class ServiceMisconfigured(VigilError, status_code=500, code="service_misconfigured"):
    """The operator's configuration is unusable (e.g. an invalid secret key); the message says what to fix."""


def field_errors(errors: Iterable[Mapping[str, Any]], *, skip: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Pydantic/FastAPI validation errors as the `details` entries of the one error shape.

    `skip` drops a leading location part that means nothing to a client (FastAPI's "body"), and only a leading
    one: a field may itself be called "body".
    """
    return [
        {
            "field": ".".join(str(part) for part in _without_leading(tuple(item.get("loc", ())), skip)),
            "message": item.get("msg", ""),
            "type": item.get("type", ""),
        }
        for item in errors
    ]


def _without_leading(loc: tuple[Any, ...], skip: tuple[str, ...]) -> tuple[Any, ...]:
    return loc[1:] if loc and loc[0] in skip else loc
