"""Switchable faults for the vendor fakes: the ways a sick vendor (or the network in front of it) answers badly.

A test switches a fault on with ``fake.inject(Fault.X, match=...)``; every matching request gets the faulty answer
instead of the real handler until ``fake.clear_faults()`` or ``fake.reset()``, and the returned rule counts the
requests it caught (``rule.hits``), so a test can hold the client's retries to a bound.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import StrEnum

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

#: How long a never-answering request is held at most (it ends sooner when the client leaves or the fault is off).
HANG_LIMIT_SECONDS = 300.0
#: A slow body's pace: one byte per this many seconds, far slower than any client timeout worth having.
TRICKLE_SECONDS = 0.5
TRICKLE_BYTES = 600

HTML_ERROR_PAGE = (
    "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>"
    "<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"
)
#: A JSON object whose every field a vendor client might read has the wrong type.
WRONG_TYPES = (
    b'{"success": true, "ok": true, "result": 42, "result_info": "x", "value": 42, '
    b'"paging": 42, "errors": 7, "access_token": 42, "user": "x", "channel": 7}'
)


class Fault(StrEnum):
    ERROR_500 = "always 500"
    UNAVAILABLE_503 = "503 with Retry-After"
    RATE_LIMITED = "429 storm"
    HANG = "never answers"
    TRUNCATED_JSON = "truncated JSON body"
    WRONG_TYPE_JSON = "JSON fields of the wrong type"
    HTML_PAGE = "HTML error page"
    SLOW_BODY = "body trickled slower than the client's timeout"
    RESET_MID_BODY = "connection reset mid-body"


@dataclass
class FaultRule:
    """One switched-on fault: ``match`` (a substring of the path, query or body; None = every request)."""

    mode: Fault
    match: str | None = None
    retry_after: str | None = None
    hits: int = 0
    active: bool = True

    def matches(self, path: str, query: str, body: bytes) -> bool:
        if self.match is None:
            return True
        return self.match in path or self.match in query or self.match.encode() in body


class _ResetMidBody(Response):
    """Headers promising 4 KiB, a few bytes of body, then the server drops the connection."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"4096")],
            }
        )
        await send({"type": "http.response.body", "body": b'{"value": [{"id": ', "more_body": True})
        # Raising after the response started makes uvicorn close the transport: the client sees the peer hang up.
        raise ConnectionResetError("fault injection: connection reset mid-body")


async def _hang(rule: FaultRule, request: Request) -> Response:
    """Hold the request without answering until the client gives up, the fault is switched off or the limit."""
    deadline = time.monotonic() + HANG_LIMIT_SECONDS
    while rule.active and time.monotonic() < deadline and not await request.is_disconnected():
        await asyncio.sleep(0.05)
    return JSONResponse({"error": "fault over"}, 504)


async def _trickle(rule: FaultRule) -> AsyncIterator[bytes]:
    yield b'{"value": ['
    for _ in range(TRICKLE_BYTES):
        if not rule.active:
            break
        await asyncio.sleep(TRICKLE_SECONDS)
        yield b" "
    yield b"]}"


async def faulty_answer(rule: FaultRule, request: Request) -> Response:
    """The fault's answer to ``request`` (whose body has already been read)."""
    retry_after = {"Retry-After": rule.retry_after} if rule.retry_after is not None else {}
    error = {"error": {"code": "FaultInjected", "message": rule.mode.value}}
    match rule.mode:
        case Fault.ERROR_500:
            return JSONResponse(error, 500)
        case Fault.UNAVAILABLE_503:
            return JSONResponse(error, 503, headers={"Retry-After": rule.retry_after or "1"})
        case Fault.RATE_LIMITED:
            return JSONResponse(error, 429, headers=retry_after)
        case Fault.HANG:
            return await _hang(rule, request)
        case Fault.TRUNCATED_JSON:
            return Response(b'{"value": [{"id": "1e5bc9d7', 200, media_type="application/json")
        case Fault.WRONG_TYPE_JSON:
            return Response(WRONG_TYPES, 200, media_type="application/json")
        case Fault.HTML_PAGE:
            return HTMLResponse(HTML_ERROR_PAGE, 502)
        case Fault.SLOW_BODY:
            return StreamingResponse(_trickle(rule), 200, media_type="application/json")
        case Fault.RESET_MID_BODY:
            return _ResetMidBody()
