"""Loopback fake of the Push Security REST API v1 (reference D), including its per-key rate limit."""

from __future__ import annotations

import base64
import time
from collections import deque
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.base import FakeVendor

READ_KEY = "psk_read_6f1c0d9a8b7e4f3a2b1c0d9e8f7a6b5c"
FULL_KEY = "psk_full_0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d"
EXPIRED_KEY = "psk_read_expired00000000000000000000"
EMPLOYEE_JOHN = "72f0b7fd-0ac7-4c2c-9dbe-4cde4a1e3a55"
EMPLOYEE_JANE = "0b6d1bb2-4e0e-4c71-8f7e-2b8b7fd7c9a1"


def _account(n: int, email: str, app: str, employee: str, mfa: bool | None, last_used: int) -> dict[str, Any]:
    return {
        "id": f"d6a32ba5-0532-4a66-8137-48cdf409c9{n:02d}",
        "employeeId": employee,
        "appType": app,
        "appId": f"2a2197de-ad2c-47e4-8dcb-fb0f04cf83{n:02d}",
        "email": email,
        "mfaRegistered": mfa,
        "mfaMethods": ["APP_TOTP", "PUSH_NOTIFICATION"] if mfa else [],
        "passwordId": f"4d6e7f80-1a2b-4c3d-9e8f-0a1b2c3d4e{n:02d}" if n % 3 else "4d6e7f80-shared-password",
        "loginMethods": {
            "passwordLogin": n % 2 == 0,
            "oidcLogin": "GOOGLE_WORKSPACE" if n % 2 else None,
            "samlLogin": None,
            "oktaSwaLogin": False,
            "vendorSsoLogin": None,
            "fedCmLogin": None,
        },
        "creationTimestamp": 1698064423 + n * 3600,
        "lastUsedTimestamp": last_used,
    }


ACCOUNTS: list[dict[str, Any]] = [
    _account(1, "john.hill@example.com", "ATLASSIAN", EMPLOYEE_JOHN, True, 1716200000),
    _account(2, "john.hill@example.com", "SLACK", EMPLOYEE_JOHN, True, 1716290000),
    _account(3, "john.hill@example.com", "GITHUB", EMPLOYEE_JOHN, False, 1715000000),
    _account(4, "jane.doe@example.com", "ATLASSIAN", EMPLOYEE_JANE, None, 1716100000),
    _account(5, "jane.doe@example.com", "ZOOM", EMPLOYEE_JANE, True, 1714000000),
    _account(6, "john.hill.contractor@example.com", "NOTION", EMPLOYEE_JOHN, False, 1713000000),
    _account(7, "ops@example.com", "AWS", EMPLOYEE_JANE, True, 1716300000),
]


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def _decode(token: str) -> int:
    return int(base64.urlsafe_b64decode(token.encode()).decode().split(":")[1])


class PushFake(FakeVendor):
    """Enforces 10 req/s + 10 burst per key (429 beyond, as the API does); pages with ``paging.nextToken``."""

    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        super().reset()
        self.page_size_cap = 100
        self._seen: dict[str, deque[float]] = {}

    def routes(self) -> list[Route]:
        return [self.route("/v1/accounts", self.list_accounts, ["GET"])]

    def _check(self, request: Request) -> Response | None:
        key = request.headers.get("x-api-key")
        if key == EXPIRED_KEY or key not in (READ_KEY, FULL_KEY):
            return JSONResponse({"message": "Unauthorized"}, 401)
        if request.method != "GET" and key == READ_KEY:
            return JSONResponse({"message": "Forbidden: API key is read only"}, 403)
        window = self._seen.setdefault(key, deque())
        now = time.monotonic()
        while window and now - window[0] > 1.0:
            window.popleft()
        if len(window) >= 20:
            return JSONResponse({"message": "Too many requests"}, 429)
        window.append(now)
        return None

    async def list_accounts(self, request: Request) -> Response:
        denied = self._check(request)
        if denied:
            return denied
        q = request.query_params
        if q.get("nextToken") and q.get("offset"):
            return JSONResponse({"message": "nextToken and offset cannot be combined"}, 400)
        items = ACCOUNTS
        if q.get("email"):
            items = [a for a in items if q["email"].lower() in a["email"].lower()]
        for param, field in (("appType", "appType"), ("employeeId", "employeeId"), ("passwordId", "passwordId")):
            if q.get(param):
                items = [a for a in items if a[field] == q[param]]
        if q.get("lastUsedTimestampAfter"):
            items = [a for a in items if a["lastUsedTimestamp"] > int(q["lastUsedTimestampAfter"])]
        if q.get("lastUsedTimestampBefore"):
            items = [a for a in items if a["lastUsedTimestamp"] < int(q["lastUsedTimestampBefore"])]
        try:
            limit = min(int(q.get("limit") or 100), self.page_size_cap)
            start = _decode(q["nextToken"]) if q.get("nextToken") else int(q.get("offset") or 0)
        except (ValueError, IndexError):
            return JSONResponse({"message": "Invalid pagination parameters"}, 400)
        window = items[start : start + limit]
        more = start + limit < len(items)
        paging = {"moreResults": more, "nextToken": _encode(start + limit) if more else None}
        return JSONResponse({"result": window, "paging": paging})
