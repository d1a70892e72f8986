"""Loopback fake of the Push Security REST API v1 (reference D), including its per-key rate limit.

The data it serves lives on the instance (``accounts``, ``findings``, ``detections``): ``reset()`` loads copies of
the module's ACCOUNTS, FINDINGS and DETECTIONS, and a test or an evaluation scenario may replace any of the three
lists with its own records (same camelCase shapes as the API).
"""

from __future__ import annotations

import base64
import copy
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from pydantic import Field
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vigil.integrations.fakes import ScenarioData, ScenarioFake, StatefulFakeVendor

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


EMPLOYEES: dict[str, dict[str, Any]] = {
    EMPLOYEE_JOHN: {
        "id": EMPLOYEE_JOHN,
        "email": "john.hill@example.com",
        "firstName": "John",
        "lastName": "Hill",
        "department": "Security Engineering",
        "location": "New York",
        "licensed": True,
        "chatopsEnabled": True,
        "creationTimestamp": 1698669223,
    },
    EMPLOYEE_JANE: {
        "id": EMPLOYEE_JANE,
        "email": "jane.doe@example.com",
        "firstName": "Jane",
        "lastName": "Doe",
        "department": "Finance",
        "location": "London",
        "licensed": True,
        "chatopsEnabled": False,
        "creationTimestamp": 1698669400,
    },
}


def _finding(
    n: int, kind: str, state: str, employee: str | None, account: int | None, created: int, reasons: list[str]
) -> dict[str, Any]:
    """A finding (reference D.6); ``account`` is the ``_account`` number it is about, None for employee-wide."""
    linked = ACCOUNTS[account - 1] if account is not None else None
    return {
        "id": f"8f1e2d3c-4b5a-4697-8e7f-6a5b4c3d2e{n:02d}",
        "type": kind,
        "state": state,
        "employeeId": employee,
        "passwordId": linked["passwordId"] if linked else None,
        "accountId": linked["id"] if linked else None,
        "appType": linked["appType"] if linked else None,
        "appId": linked["appId"] if linked else None,
        "weakPasswordReasons": reasons,
        "creationTimestamp": created,
    }


# Consistent with ACCOUNTS: accounts 3 (GITHUB) and 6 (NOTION) share John's password and have no MFA; 7 is the
# shared ops@ AWS login. The last finding is not linked to an employee and reaches John only through his account.
FINDINGS: list[dict[str, Any]] = [
    _finding(1, "MFA_NOT_REGISTERED", "OPEN", EMPLOYEE_JOHN, 3, 1715000100, []),
    _finding(2, "REUSED_PASSWORD", "OPEN", EMPLOYEE_JOHN, 3, 1715000200, []),
    _finding(3, "REUSED_PASSWORD", "OPEN", EMPLOYEE_JOHN, 6, 1713000200, []),
    _finding(4, "WEAK_PASSWORD", "RESOLVED", EMPLOYEE_JOHN, 1, 1710000000, ["TOO_SHORT", "NO_SPECIAL_CHARACTERS"]),
    _finding(5, "LEAKED_PASSWORD", "OPEN", EMPLOYEE_JANE, 4, 1716100500, []),
    _finding(6, "MFA_NOT_REGISTERED", "RESOLVED", EMPLOYEE_JANE, 5, 1712000000, []),
    _finding(7, "SHARED_ACCOUNT", "OPEN", EMPLOYEE_JANE, 7, 1716300500, []),
    _finding(8, "STOLEN_CREDENTIALS", "OPEN", EMPLOYEE_JOHN, 2, 1716290500, []),
    _finding(9, "PASSWORD_MANAGER_NOT_USED", "OPEN", EMPLOYEE_JOHN, None, 1700000000, []),
    _finding(10, "WEAK_PASSWORD", "OPEN", None, 1, 1716200500, ["COMMON_PASSWORD"]),
]


def _detection(
    n: int, kind: str, severity: str, response: str, employee: str, archived: bool, created: int
) -> dict[str, Any]:
    """A detection (``GET /v1/detections``, reference D.7). The ``response`` values are illustrative: the
    reference names the field but not its values."""
    return {
        "id": f"c478966c-f927-411c-b919-179832d3d5{n:02d}",
        "employeeId": employee,
        "employee": copy.deepcopy(EMPLOYEES[employee]),
        "browserId": f"2a2197de-ad2c-47e4-8dcb-b0f0e5e5e5{n:02d}",
        "detectionType": kind,
        "severity": severity,
        "response": response,
        "archived": archived,
        "creationTimestamp": created,
    }


DETECTIONS: list[dict[str, Any]] = [
    # AiTM phishing kit page, not blocked, John entered his password: the worst case.
    _detection(1, "PHISHING", "CRITICAL", "MONITORED", EMPLOYEE_JOHN, False, 1716300000),
    _detection(2, "PHISHING", "LOW", "BLOCKED", EMPLOYEE_JANE, False, 1716250000),
    _detection(3, "STOLEN_CREDENTIALS", "HIGH", "MONITORED", EMPLOYEE_JOHN, False, 1716290600),
    _detection(4, "PHISHING", "MEDIUM", "WARNED", EMPLOYEE_JOHN, True, 1714000000),
    _detection(5, "BLOCKED_URL", "LOW", "BLOCKED", EMPLOYEE_JANE, False, 1716000000),
    _detection(6, "MALWARE_DELIVERY", "HIGH", "MONITORED", EMPLOYEE_JANE, True, 1713500000),
]


def _encode(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def _decode(token: str) -> int:
    return int(base64.urlsafe_b64decode(token.encode()).decode().split(":")[1])


Select = Callable[[list[dict[str, Any]], QueryParams], list[dict[str, Any]]]


def _created_after(items: list[dict[str, Any]], q: QueryParams) -> list[dict[str, Any]]:
    """The ``creationTimestampAfter`` filter findings and detections document."""
    if not q.get("creationTimestampAfter"):
        return items
    after = int(q["creationTimestampAfter"])
    return [i for i in items if (i.get("creationTimestamp") or 0) > after]


def _account_filters(items: list[dict[str, Any]], q: QueryParams) -> list[dict[str, Any]]:
    if q.get("email"):
        items = [a for a in items if q["email"].lower() in (a.get("email") or "").lower()]
    for param in ("appType", "employeeId", "passwordId"):
        if q.get(param):
            items = [a for a in items if a.get(param) == q[param]]
    if q.get("lastUsedTimestampAfter"):
        items = [a for a in items if (a.get("lastUsedTimestamp") or 0) > int(q["lastUsedTimestampAfter"])]
    if q.get("lastUsedTimestampBefore"):
        items = [a for a in items if (a.get("lastUsedTimestamp") or 0) < int(q["lastUsedTimestampBefore"])]
    return items


class PushFake(StatefulFakeVendor):
    """Enforces 10 req/s + 10 burst per key (429 beyond, as the API does); pages with ``paging.nextToken``."""

    accounts: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    detections: list[dict[str, Any]]

    def reset(self) -> None:
        super().reset()
        self.page_size_cap = 100
        self.accounts = copy.deepcopy(ACCOUNTS)
        self.findings = copy.deepcopy(FINDINGS)
        self.detections = copy.deepcopy(DETECTIONS)
        self._seen: dict[str, deque[float]] = {}

    def routes(self) -> list[Route]:
        return [
            self.route("/v1/accounts", self.list_accounts, ["GET"]),
            self.route("/v1/findings", self.list_findings, ["GET"]),
            self.route("/v1/detections", self.list_detections, ["GET"]),
        ]

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
        return self._list(request, self.accounts, _account_filters)

    async def list_findings(self, request: Request) -> Response:
        return self._list(request, self.findings, _created_after)

    async def list_detections(self, request: Request) -> Response:
        return self._list(request, self.detections, _created_after)

    def _list(self, request: Request, records: list[dict[str, Any]], select: Select) -> Response:
        """Every list route: key and rate-limit check, the route's filters, then ``limit`` + ``nextToken``/
        ``offset`` paging into ``{"result": [...], "paging": {"moreResults", "nextToken"}}``."""
        denied = self._check(request)
        if denied:
            return denied
        q = request.query_params
        if q.get("nextToken") and q.get("offset"):
            return JSONResponse({"message": "nextToken and offset cannot be combined"}, 400)
        try:
            items = select(list(records), q)
        except ValueError:
            return JSONResponse({"message": "Invalid filter parameters"}, 400)
        try:
            limit = min(int(q.get("limit") or 100), self.page_size_cap)
            start = _decode(q["nextToken"]) if q.get("nextToken") else int(q.get("offset") or 0)
        except (ValueError, IndexError):
            return JSONResponse({"message": "Invalid pagination parameters"}, 400)
        if limit < 1 or start < 0:
            return JSONResponse({"message": "Invalid pagination parameters"}, 400)
        window = items[start : start + limit]
        more = start + limit < len(items)
        paging = {"moreResults": more, "nextToken": _encode(start + limit) if more else None}
        return JSONResponse({"result": window, "paging": paging})


# --- evaluation scenarios ---------------------------------------------------------------------------------------


def connection_values(fake: PushFake, **overrides: str) -> dict[str, str]:
    """Connection fields (a read-only key) that authenticate at ``fake``, whose URL is the connection's domain."""
    return {"api_key": READ_KEY, "domain": fake.url, **overrides}


class PushSecurityData(ScenarioData):
    accounts: list[dict[str, Any]] = Field(default_factory=list)
    findings: list[dict[str, Any]] = Field(default_factory=list)
    detections: list[dict[str, Any]] = Field(default_factory=list)


class PushSecurityScenarioFake(ScenarioFake[PushFake, PushSecurityData]):
    integration_id = "push_security"

    def connection_values(self) -> dict[str, str]:
        return connection_values(self.fake)

    def load(self, data: PushSecurityData) -> None:
        self.fake.accounts = copy.deepcopy(data.accounts)
        self.fake.findings = copy.deepcopy(data.findings)
        self.fake.detections = copy.deepcopy(data.detections)


SCENARIO_FAKE = PushSecurityScenarioFake
