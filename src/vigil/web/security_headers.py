"""Security headers on every response: a script-tight Content-Security-Policy, no framing, no sniffing, HSTS on TLS.

The console has no inline script, handler or style (vigil.js wires pages up through data attributes), so its
policy allows scripts and styles from Vigil's own origin only. The Swagger UI (`/docs`) and ReDoc (`/redoc`)
pages load vendored assets from Vigil too (vigil.console.api_docs) but start with an inline script, and ReDoc injects
its styles at run time; those paths alone get a policy that allows exactly the inline scripts they serve (by
SHA-256 hash, never `'unsafe-inline'` scripts), inline styles, and ReDoc's search worker from a blob.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_COMMON = "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
CONSOLE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    f"connect-src 'self'; {_COMMON}"
)
DOCS_PATHS = ("/docs", "/redoc")
_DOCS_POLICY_REST = (
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; worker-src 'self' blob:; "
    f"connect-src 'self'; {_COMMON}"
)
#: Browsers ignore HSTS over plain HTTP; a year, without includeSubDomains (the operator's other hosts are theirs).
HSTS = "max-age=31536000"
_FIXED = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
)
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.S | re.I)


def docs_policy(html: bytes) -> str:
    """The docs pages' policy: Vigil's own scripts plus the hash of each inline script they contain."""
    sources = ["'self'"]
    sources += [
        f"'sha256-{base64.b64encode(hashlib.sha256(body).digest()).decode()}'" for body in _INLINE_SCRIPT.findall(html)
    ]
    return f"default-src 'self'; script-src {' '.join(sources)}; {_DOCS_POLICY_REST}"


def is_docs_path(path: str) -> bool:
    return any(path == prefix or path.startswith(prefix + "/") for prefix in DOCS_PATHS)


class SecurityHeadersMiddleware:
    """Adds the headers to every HTTP response (API, console, static files, errors) unless a route set its own.

    HSTS is sent only when the request reached Vigil over TLS: `scope["scheme"]` is "https" when uvicorn
    terminates TLS itself or trusts the proxy's X-Forwarded-Proto (`FORWARDED_ALLOW_IPS`), never from an
    untrusted client's header.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = list(_FIXED)
        if scope.get("scheme") == "https":
            extra.append((b"strict-transport-security", HSTS.encode()))
        if is_docs_path(scope["path"]):
            await self.app(scope, receive, _DocsSender(send, extra))
            return
        extra.append((b"content-security-policy", CONSOLE_POLICY.encode()))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _merged(message.get("headers", []), extra)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _DocsSender:
    """Holds the docs page's start message until its body is complete, so the policy can hash its scripts."""

    def __init__(self, send: Send, extra: list[tuple[bytes, bytes]]) -> None:
        self._send = send
        self._extra = extra
        self._start: Message | None = None
        self._body: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self._start = message
            return
        if message["type"] != "http.response.body" or self._start is None:
            await self._send(message)
            return
        self._body.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = b"".join(self._body)
        policy = (b"content-security-policy", docs_policy(body).encode())
        self._start["headers"] = _merged(self._start.get("headers", []), [*self._extra, policy])
        await self._send(self._start)
        await self._send({"type": "http.response.body", "body": body, "more_body": False})


def _merged(headers: Iterable[tuple[bytes, bytes]], extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    headers = list(headers)
    present = {name.lower() for name, _ in headers}
    return [*headers, *((name, value) for name, value in extra if name not in present)]
