"""The one place typed errors become HTTP: `{"error": {"code", "message", "details"}}`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from vigil.errors import DatabaseUnavailable, VigilError, field_errors
from vigil.web.request_context import request_id_var

logger = logging.getLogger("vigil.api")

#: Seconds a client is told to wait on a 503 that did not say otherwise (the database's own 503 says 5 too).
DEFAULT_RETRY_AFTER_SECONDS = 5


def with_retry_after(status_code: int, headers: dict[str, str] | None) -> dict[str, str]:
    """`headers`, plus Retry-After on a 503 that lacks one: every 503 tells the client when to come back."""
    merged = dict(headers or {})
    if status_code == 503 and not any(name.lower() == "retry-after" for name in merged):
        merged["Retry-After"] = str(DEFAULT_RETRY_AFTER_SECONDS)
    return merged


def error_response(
    status_code: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or []}}
    return JSONResponse(body, status_code=status_code, headers=with_retry_after(status_code, headers))


PageRenderer = Callable[[Request, int, str, str], Response | None]


def install_error_handlers(app: FastAPI, page_renderer: PageRenderer | None = None) -> None:
    """`page_renderer` answers errors on web-console paths with a page; it returns None for API paths."""

    def respond(
        request: Request,
        status_code: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        page = page_renderer(request, status_code, code, message) if page_renderer else None
        if page is None:
            return error_response(status_code, code, message, details, headers)
        page.headers.update(with_retry_after(status_code, headers))  # a console page keeps Retry-After on a 503
        return page

    @app.exception_handler(VigilError)
    async def _vigil_error(request: Request, error: VigilError) -> Response:
        if isinstance(error, DatabaseUnavailable):
            logger.warning("database unavailable: %s", error.__cause__, extra={"request_id": request_id_var.get()})
        return respond(request, error.status_code, error.code, error.message, error.details, error.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, error: RequestValidationError) -> Response:
        problems = list(error.errors())
        if any(item.get("type") == "json_invalid" for item in problems):
            return respond(request, 400, "malformed_json", "The request body is not valid JSON.")
        details = field_errors(problems, skip=("body",))
        fields = ", ".join(sorted({d["field"] for d in details if d["field"]})) or "the request"
        return respond(request, 422, "validation_error", f"Invalid or missing fields: {fields}.", details)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, error: StarletteHTTPException) -> Response:
        codes = {404: "not_found", 405: "method_not_allowed"}
        return respond(
            request,
            error.status_code,
            codes.get(error.status_code, "http_error"),
            str(error.detail),
            headers=dict(error.headers or {}),
        )

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, error: Exception) -> Response:
        logger.exception("unhandled error", extra={"request_id": request_id_var.get()})
        return respond(request, 500, "internal_error", "An unexpected error occurred; it has been logged.")
