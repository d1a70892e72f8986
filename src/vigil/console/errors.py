"""Errors on console pages are pages (or, for HTMX requests, a fragment), never the API's JSON."""

from __future__ import annotations

import contextlib
from urllib.parse import quote

from fastapi import Request, Response
from fastapi.responses import RedirectResponse

from vigil.console.deps import FIRST_SIGN_IN_PATH, PasswordChangeRequired, SignInRequired, signed_in_identity
from vigil.console.rendering import render
from vigil.errors import VigilError

NON_CONSOLE_PREFIXES = ("/serviceapi", "/docs", "/redoc", "/openapi.json", "/healthz", "/readyz", "/metrics", "/static")


def is_console_request(request: Request) -> bool:
    return not request.url.path.startswith(NON_CONSOLE_PREFIXES)


def is_htmx(request: Request) -> bool:
    return request.headers.get("hx-request") == "true"


def console_error_response(request: Request, status_code: int, code: str, message: str) -> Response | None:
    """The console's answer to an error, or None for API paths (which keep the JSON error shape)."""
    if not is_console_request(request):
        return None
    if code in (SignInRequired.code, PasswordChangeRequired.code):
        here = quote(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
        target = ("/login" if code == SignInRequired.code else FIRST_SIGN_IN_PATH) + "?next=" + here
        if is_htmx(request):
            return Response(status_code=204, headers={"HX-Redirect": target})
        return RedirectResponse(target, status_code=303)
    if not is_htmx(request):
        # Keep a signed-in user's navigation on error pages; if even that fails (database down), render without.
        with contextlib.suppress(VigilError):
            signed_in_identity(request)
    template = "partials/error.html" if is_htmx(request) else "error.html"
    return render(
        request, template, {"status_code": status_code, "code": code, "message": message}, status_code=status_code
    )
