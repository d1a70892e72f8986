"""Templates, their filters, and `render`, which gives every page the signed-in user and a CSRF token."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from vigil import __version__
from vigil.alerts.constants import InvestigationStatus
from vigil.console.security import ConsoleSigner, csrf_anchor
from vigil.integrations.catalog import skill_name
from vigil.users.schemas import ConsoleIdentity

templates = Jinja2Templates(directory=Path(__file__).parent / "templates")


def epoch_time(value: int | None, style: str = "datetime") -> Markup:
    """A <time> element in UTC that the console's script rewrites into the browser's time zone."""
    if value is None:
        return Markup('<span class="muted">—</span>')
    moment = datetime.fromtimestamp(value, tz=UTC)
    return Markup('<time datetime="{iso}" data-epoch="{epoch}" data-style="{style}">{text}</time>').format(
        iso=moment.isoformat(), epoch=value, style=style, text=moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    )


def status_label(value: int) -> str:
    return InvestigationStatus(value).label


def pretty_json(value: Any) -> str:
    """JSON text indented for reading; anything that is not JSON comes back as it was."""
    if isinstance(value, str):
        try:
            parsed: Any = json.loads(value)
        except ValueError:
            return value
        value = parsed
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)


def humanize(value: str | None) -> str:
    return (value or "").replace("_", " ").capitalize()


def duration_ms(value: float | int | None) -> str:
    """Milliseconds for reading: "< 1 ms", "412 ms", "4.2 s", "38 s", "2 min 5 s", "1 h 4 min"."""
    if value is None:
        return "—"
    if value < 1:
        return "< 1 ms"
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 10_000:
        return f"{value / 1000:.1f} s"
    seconds = round(value / 1000)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def nl2br(value: str) -> Markup:
    return Markup("<br>").join(escape(line) for line in value.splitlines())


templates.env.filters.update(
    epoch=epoch_time,
    status_label=status_label,
    pretty_json=pretty_json,
    humanize=humanize,
    duration=duration_ms,
    skill_name=skill_name,
    nl2br=nl2br,
)
templates.env.globals.update(version=__version__)


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    signer: ConsoleSigner = request.app.state.console_signer
    anchor = csrf_anchor(request, signer)
    identity: ConsoleIdentity | None = getattr(request.state, "identity", None)
    full_context = {
        "identity": identity,
        "csrf_token": signer.csrf_token(anchor) if anchor else "",
        "current_path": request.url.path,
        **(context or {}),
    }
    return templates.TemplateResponse(request, template, full_context, status_code=status_code, headers=headers)
