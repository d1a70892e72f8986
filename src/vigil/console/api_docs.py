"""Swagger UI (`/docs`), ReDoc (`/redoc`) and the favicon, served from Vigil's own static files.

FastAPI's defaults load the docs assets from a CDN, which leaves both pages blank without internet access and
needs the CDN in their Content-Security-Policy; the vendored copies (console/static/vendor/README.md) need neither.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse

from vigil.console.router import CONSOLE_STATIC_DIR

FAVICON_URL = "/static/favicon.svg"
_VENDOR = "/static/vendor"
#: No validator badge: Swagger UI would send the spec's URL to validator.swagger.io from a deployed host.
_SWAGGER_PARAMETERS = {"validatorUrl": None}

router = APIRouter(include_in_schema=False)


def _title(request: Request) -> str:
    return str(request.app.title)


@router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=str(request.app.openapi_url),
        title=f"{_title(request)} API",
        swagger_js_url=f"{_VENDOR}/swagger-ui/swagger-ui-bundle.js",
        swagger_css_url=f"{_VENDOR}/swagger-ui/swagger-ui.css",
        swagger_favicon_url=FAVICON_URL,
        oauth2_redirect_url=None,
        swagger_ui_parameters=_SWAGGER_PARAMETERS,
    )


@router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(
        openapi_url=str(request.app.openapi_url),
        title=f"{_title(request)} API",
        redoc_js_url=f"{_VENDOR}/redoc/redoc.standalone.js",
        redoc_favicon_url=FAVICON_URL,
        with_google_fonts=False,
    )


@router.get("/favicon.ico")
def favicon() -> FileResponse:
    """Browsers ask for /favicon.ico on every page; the console's is an SVG, which they accept by content type."""
    return FileResponse(CONSOLE_STATIC_DIR / "favicon.svg", media_type="image/svg+xml")
