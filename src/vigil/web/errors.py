"""The one place typed errors become HTTP: `{"error": {"code", "message", "details"}}`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from vigil.errors import DatabaseUnavailable, VigilError, field_errors
from vigil.web.request_context import request_id_var

logger = logging.getLogger("vigil.api")


def error_response(
    status_code: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "details": details or []}}
    return JSONResponse(body, status_code=status_code, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(VigilError)
    async def _vigil_error(_request: Request, error: VigilError) -> JSONResponse:
        if isinstance(error, DatabaseUnavailable):
            logger.warning("database unavailable: %s", error.__cause__, extra={"request_id": request_id_var.get()})
        return error_response(error.status_code, error.code, error.message, error.details, error.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, error: RequestValidationError) -> JSONResponse:
        problems = list(error.errors())
        if any(item.get("type") == "json_invalid" for item in problems):
            return error_response(400, "malformed_json", "The request body is not valid JSON.")
        details = field_errors(problems, skip=("body",))
        fields = ", ".join(sorted({d["field"] for d in details if d["field"]})) or "the request"
        return error_response(422, "validation_error", f"Invalid or missing fields: {fields}.", details)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, error: StarletteHTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed"}
        return error_response(
            error.status_code,
            codes.get(error.status_code, "http_error"),
            str(error.detail),
            headers=dict(error.headers or {}),
        )

    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, error: Exception) -> JSONResponse:
        logger.exception("unhandled error", extra={"request_id": request_id_var.get()})
        return error_response(500, "internal_error", "An unexpected error occurred; it has been logged.")
