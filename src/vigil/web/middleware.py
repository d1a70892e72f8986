"""ASGI middleware: request ids and timing, and body guards (size, content type) before parsing."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vigil.input_types import NUL_MESSAGE
from vigil.metrics import HTTP_REQUEST_SECONDS
from vigil.web.errors import error_response
from vigil.web.request_context import request_id_var

_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestContextMiddleware:
    """Assigns/propagates X-Request-ID and records request latency by route template."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        incoming = headers.get(b"x-request-id", b"").decode("latin-1")
        # Not uuid4(): os.urandom releases the GIL, and under load the event loop then waits for it behind the
        # intake writer's thread. A request id needs to be unique, not unpredictable.
        request_id = incoming if _SAFE_REQUEST_ID.match(incoming) else f"{random.getrandbits(128):032x}"
        token = request_id_var.set(request_id)
        started = time.perf_counter()
        status_holder = {"status": 500}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", "unmatched")
            HTTP_REQUEST_SECONDS.labels(scope["method"], template, str(status_holder["status"])).observe(
                time.perf_counter() - started
            )
            request_id_var.reset(token)


class BodyGuardMiddleware:
    """Rejects oversized bodies (413) and non-JSON bodies sent to the API (415) before any parsing, and NUL
    characters in the console's paths, query strings and forms (422).

    Bodiless POSTs (e.g. `/retry`) need no Content-Type. The API's inputs are typed (`vigil.input_types` names the
    field); the console reads plain strings from queries and forms, and PostgreSQL cannot hold (or even compare
    against) a NUL, so one check here covers every console page and form instead of each handler guarding.
    """

    def __init__(self, app: ASGIApp, limit_for_path: Callable[[str], int], json_prefix: str = "/serviceapi") -> None:
        self.app = app
        self.limit_for_path = limit_for_path
        self.json_prefix = json_prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        console = not path.startswith(self.json_prefix)
        if console and (field := _nul_field(path, scope.get("query_string", b""), "query")):
            await self._reject_nul(scope, receive, send, field)
            return
        if scope["method"] not in {"POST", "PUT", "PATCH"}:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        limit = self.limit_for_path(path)
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._reject(
                scope, receive, send, 413, "payload_too_large", f"The request body exceeds {limit} bytes."
            )
            return
        # Buffer up to the limit so chunked bodies without Content-Length are bounded too.
        chunks: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            chunk = message.get("body", b"")
            received += len(chunk)
            if received > limit:
                await self._reject(
                    scope, receive, send, 413, "payload_too_large", f"The request body exceeds {limit} bytes."
                )
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if console and (field := _nul_field("", body, "form")):
            await self._reject_nul(scope, receive, send, field)
            return
        if body and path.startswith(self.json_prefix) and not self._is_webhook(path):
            content_type = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
            if content_type != "application/json":
                await self._reject(
                    scope,
                    receive,
                    send,
                    415,
                    "unsupported_media_type",
                    "Send the body as Content-Type: application/json.",
                )
                return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    @staticmethod
    def _is_webhook(path: str) -> bool:
        # Chat interactions arrive form-encoded; webhooks verify their own bodies.
        return "/webhooks/" in path

    @staticmethod
    async def _reject(scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str) -> None:
        await error_response(status, code, message)(scope, receive, send)

    @staticmethod
    async def _reject_nul(scope: Scope, receive: Receive, send: Send, field: str) -> None:
        message = f"Invalid or missing fields: {field}."
        details = [{"field": field, "message": NUL_MESSAGE, "type": "text_nul"}]
        await error_response(422, "validation_error", message, details)(scope, receive, send)


def _nul_field(path: str, encoded: bytes, where: str) -> str | None:
    """The first `path` or url-encoded field (`query.q`, `form.name`) holding a NUL, raw or as %00; else None."""
    if "\x00" in path:
        return "path"
    if b"\x00" not in encoded and b"%00" not in encoded:
        return None  # the common case: one scan in C
    for name, value in parse_qsl(encoded.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            return f"{where}.{name.replace(chr(0), '')}"
    return None
