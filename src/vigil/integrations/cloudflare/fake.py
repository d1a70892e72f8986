"""Loopback fake of the Cloudflare API v4 (reference B): both auth schemes, the success/errors envelope, codes."""

from __future__ import annotations

import copy
import re
import secrets
import uuid
from datetime import UTC, datetime
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network
from typing import Any

from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vigil.integrations.fakes import ScenarioData, ScenarioFake, StatefulFakeVendor

ACCOUNT_ID = "01a7362d577a6c3019a474fd6f485823"
ZONE_ID = "023e105f4ecef8ad9ca31a8372d0c353"
OTHER_ZONE_ID = "9a7806061c88ada191ed06f989cc3dac"
USER_TOKEN = "YQSn-xWAQiiEh9qM58wZNnyQS7FUdoqGIUAbrh7T"
ACCOUNT_TOKEN = "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zA7bC0dE2"
EMAIL = "secops@example.com"
GLOBAL_KEY = "c2547eb745079dac9320b638f5e225cf483cc"
ALL_PERMISSIONS = frozenset({"audit_logs", "security_insights", "access_apps", "zone", "rulesets"})

_TOKEN_FORMAT = re.compile(r"^[A-Za-z0-9_-]{40}$")
_KEY_FORMAT = re.compile(r"^[0-9a-f]{37}$")
_ID_FORMAT = re.compile(r"^[0-9a-f]{32}$")

AUDIT_LOGS: list[dict[str, Any]] = [
    {
        "id": f"d5b0f326-1232-4452-8858-1089bd7168{n:02d}",
        "action": {"type": kind, "result": True},
        "actor": {"id": "f6b5de0326bb5182b8a4840ee01ec774", "email": email, "ip": ip, "type": "user"},
        "interface": iface,
        "metadata": {"name": "security_level", "type": "firewall", "value": "high", "zone_name": zone},
        "newValue": "high",
        "oldValue": "medium",
        "newValueJson": {"value": "high"},
        "oldValueJson": {"value": "medium"},
        "owner": {"id": ACCOUNT_ID},
        "resource": {"id": ZONE_ID, "type": "zone"},
        "when": when,
    }
    for n, (kind, email, ip, iface, zone, when) in enumerate(
        [
            ("change_setting", "alice@example.com", "198.41.129.166", "UI", "example.com", "2024-05-21T10:00:00Z"),
            ("add", "mallory@example.net", "203.0.113.50", "API", "example.com", "2024-05-20T23:10:00Z"),
            ("delete", "mallory@example.net", "203.0.113.51", "API", "shop.example.org", "2024-05-19T12:00:00Z"),
            (
                "change_setting",
                "bob@example.com",
                "198.41.129.10",
                "UI",
                "shop.example.org",
                "2024-05-18T08:30:00Z",
            ),
            ("login", "alice@example.com", "198.41.129.166", "UI", "example.com", "2024-05-17T07:00:00Z"),
        ]
    )
]

INSIGHTS: list[dict[str, Any]] = [
    {
        "id": "ab4f8a3a1f1b4d2c9c1e1e2f3a4b5c6d",
        "dismissed": False,
        "has_extended_context": False,
        "issue_class": "always_use_https_not_enabled",
        "issue_type": "insecure_configuration",
        "payload": {"detection_method": "zone_settings", "zone_tag": ZONE_ID},
        "resolve_link": "/example.com/ssl-tls/edge-certificates",
        "resolve_text": "Enable Always Use HTTPS",
        "severity": "Moderate",
        "since": "2024-05-01T00:00:00Z",
        "status": "active",
        "subject": "example.com",
        "timestamp": "2024-05-21T00:00:00Z",
        "user_classification": None,
    },
    {
        "id": "cd5e9b4b2a2c5e3d0d2f2f3a4b5c6d7e",
        "dismissed": False,
        "issue_class": "exposed_infrastructure_origin_ip",
        "issue_type": "exposed_infrastructure",
        "payload": {"detection_method": "dns_records", "zone_tag": OTHER_ZONE_ID},
        "severity": "Critical",
        "since": "2024-05-10T00:00:00Z",
        "status": "active",
        "subject": "shop.example.org",
        "timestamp": "2024-05-21T00:00:00Z",
    },
    {
        "id": "ef6f0c5c3b3d6f4e1e3a3a4b5c6d7e8f",
        "dismissed": True,
        "issue_class": "weak_tls_version",
        "issue_type": "weak_authentication",
        "payload": {"detection_method": "zone_settings", "zone_tag": ZONE_ID},
        "severity": "Low",
        "status": "active",
        "subject": "example.com",
        "timestamp": "2024-05-21T00:00:00Z",
    },
]

ACCESS_APPS: list[dict[str, Any]] = [
    {
        "id": "f174e90a-fafe-4643-bbbc-4a0ed4fc8415",
        "aud": "737646a56ab1df6ec9bddc7e5ca84eaf3b0768850f3ffb5d74f1534911fe3893",
        "created_at": "2014-01-01T05:20:00.12345Z",
        "updated_at": "2014-01-01T05:20:00.12345Z",
        "name": "Admin Site",
        "domain": "test.example.com/admin",
        "self_hosted_domains": ["test.example.com/admin"],
        "type": "self_hosted",
        "session_duration": "24h",
        "allowed_idps": ["699d98642c564d2e855e9661899b7252"],
        "auto_redirect_to_identity": False,
        "app_launcher_visible": True,
        "zone_id": ZONE_ID,
    },
    {
        "id": "2d3b5f6a-7c8e-4f90-a1b2-c3d4e5f6a7b8",
        "aud": "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c5b6a7988",
        "name": "Grafana",
        "domain": "grafana.example.com",
        "self_hosted_domains": ["grafana.example.com"],
        "type": "self_hosted",
        "session_duration": "8h",
        "allowed_idps": [],
        "app_launcher_visible": True,
        "zone_id": ZONE_ID,
    },
    {
        "id": "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a",
        "name": "Salesforce",
        "domain": "example.my.salesforce.com",
        "type": "saas",
        "session_duration": "24h",
        "zone_id": None,
    },
]

ZONES: list[dict[str, Any]] = [
    {
        "id": zone_id,
        "name": name,
        "status": status,
        "paused": False,
        "type": "full",
        "development_mode": 0,
        "name_servers": ["bob.ns.cloudflare.com", "lola.ns.cloudflare.com"],
        "original_name_servers": ["ns1.originaldnshost.com", "ns2.originaldnshost.com"],
        "original_registrar": "GoDaddy",
        "original_dnshost": "NameCheap",
        "created_on": "2014-01-01T05:20:00.12345Z",
        "modified_on": "2014-01-01T05:20:00.12345Z",
        "activated_on": "2014-01-02T00:01:00.12345Z",
        "meta": {"step": 2, "phishing_detected": False, "cdn_only": False, "dns_only": False},
        "owner": {"id": "7c5dae5552338874e5053f2534d2767a", "name": "SecOps", "type": "user"},
        "account": {"id": ACCOUNT_ID, "name": "Example Corp"},
        "permissions": ["#zone:read", "#zone:edit"],
        "plan": {"id": "e592fd9519420ba7405e1307bff33214", "name": "Pro Website", "legacy_id": "pro"},
    }
    for zone_id, name, status in [
        (ZONE_ID, "example.com", "active"),
        (OTHER_ZONE_ID, "shop.example.org", "active"),
        ("5c1f7b2a9d3e4f60718293a4b5c6d7e8", "staging.example.com", "pending"),
    ]
]


def _at(item: dict[str, Any], *path: str) -> Any:
    """``item[path[0]][path[1]]…``, or None where a level is missing (scenario data need not carry every field)."""
    value: Any = item
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _in_network(address: Any, network: IPv4Network | IPv6Network) -> bool:
    try:
        return ip_address(str(address)) in network
    except ValueError:
        return False


def _envelope(
    result: Any,
    status: int = 200,
    result_info: dict[str, Any] | None = None,
    messages: list[dict[str, Any]] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"success": True, "errors": [], "messages": messages or [], "result": result}
    if result_info is not None:
        body["result_info"] = result_info
    return JSONResponse(body, status)


def cf_error(status: int, *errors: dict[str, Any]) -> JSONResponse:
    """A documented failure envelope, e.g. ``cf_error(403, {"code": 10000, "message": "Authentication error"})``."""
    return JSONResponse({"success": False, "errors": list(errors), "messages": [], "result": None}, status)


def _route_error(path: str) -> JSONResponse:
    return cf_error(
        400,
        {"code": 7003, "message": f"Could not route to {path}, perhaps your object identifier is invalid?"},
        {"code": 7000, "message": "No route for that URI"},
    )


def _header_error(chain_code: int, message: str) -> JSONResponse:
    return cf_error(
        400,
        {
            "code": 6003,
            "message": "Invalid request headers",
            "error_chain": [{"code": chain_code, "message": message}],
        },
    )


def _page(request: Request, items: list[dict[str, Any]], default_per_page: int) -> JSONResponse:
    page = int(request.query_params.get("page") or 1)
    per_page = int(request.query_params.get("per_page") or default_per_page)
    window = items[(page - 1) * per_page : page * per_page]
    total_pages = -(-len(items) // per_page)
    info = {
        "page": page,
        "per_page": per_page,
        "count": len(window),
        "total_count": len(items),
        "total_pages": total_pages,
    }
    return _envelope(window, result_info=info)


class CloudflareFake(StatefulFakeVendor):
    """Control: ``token_status``, ``token_permissions`` (missing one -> 10000), ``rulesets`` (entry points).

    Data: ``audit_logs`` and ``insights`` (module defaults after ``reset()``); ``load`` replaces them for one
    scenario.
    """

    def reset(self) -> None:
        super().reset()
        self.token_status = "active"
        self.token_permissions: frozenset[str] = ALL_PERMISSIONS
        self.rulesets: dict[tuple[str, str], dict[str, Any]] = {}
        self.audit_logs: list[dict[str, Any]] = copy.deepcopy(AUDIT_LOGS)
        self.insights: list[dict[str, Any]] = copy.deepcopy(INSIGHTS)

    def load(
        self, *, audit_logs: list[dict[str, Any]] | None = None, insights: list[dict[str, Any]] | None = None
    ) -> None:
        """Serve exactly this data (an omitted list is served empty) until the next ``reset()``."""
        self.audit_logs = copy.deepcopy(audit_logs or [])
        self.insights = copy.deepcopy(insights or [])

    def routes(self) -> list[Route]:
        v4 = "/client/v4"
        return [
            self.route(f"{v4}/user/tokens/verify", self.verify_user_token, ["GET"]),
            self.route(f"{v4}/accounts/{{account_id}}/tokens/verify", self.verify_account_token, ["GET"]),
            self.route(f"{v4}/accounts/{{account_id}}/audit_logs", self.list_audit_logs, ["GET"]),
            self.route(f"{v4}/{{scope}}/{{scope_id}}/security-center/insights", self.list_insights, ["GET"]),
            self.route(f"{v4}/{{scope}}/{{scope_id}}/access/apps", self.access_apps, ["GET"]),
            self.route(f"{v4}/zones", self.list_zones, ["GET"]),
            self.route(f"{v4}/zones/{{zone_id}}", self.get_zone, ["GET"]),
            self.route(
                f"{v4}/{{scope}}/{{scope_id}}/rulesets/phases/{{phase}}/entrypoint",
                self.entrypoint,
                ["GET", "PUT"],
            ),
            self.route(f"{v4}/{{scope}}/{{scope_id}}/rulesets/{{ruleset_id}}/rules", self.add_rule, ["POST"]),
        ]

    # --- auth, as Cloudflare checks it ----------------------------------------------------------------------
    def _auth(self, request: Request, permission: str | None) -> tuple[str | None, JSONResponse | None]:
        """Returns (token kind "user"/"account"/"key", error response)."""
        authorization = request.headers.get("authorization")
        email, key = request.headers.get("x-auth-email"), request.headers.get("x-auth-key")
        if authorization is not None:
            token = authorization.removeprefix("Bearer ")
            if not authorization.startswith("Bearer ") or not _TOKEN_FORMAT.match(token):
                return None, _header_error(6111, "Invalid format for Authorization header")
            kind = {USER_TOKEN: "user", ACCOUNT_TOKEN: "account"}.get(token)
            if kind is None or self.token_status != "active":
                return None, cf_error(403, {"code": 9109, "message": "Invalid access token"})
            if permission is not None and permission not in self.token_permissions:
                return None, cf_error(403, {"code": 10000, "message": "Authentication error"})
            return kind, None
        if email is None and key is None:
            return None, cf_error(
                400, {"code": 9106, "message": "Missing X-Auth-Key, X-Auth-Email or Authorization headers"}
            )
        if not email or "@" not in email:
            return None, _header_error(6102, "Invalid format for X-Auth-Email header")
        if not key or not _KEY_FORMAT.match(key):
            return None, _header_error(6103, "Invalid format for X-Auth-Key header")
        if (email, key) != (EMAIL, GLOBAL_KEY):
            return None, cf_error(403, {"code": 9103, "message": "Unknown X-Auth-Key or X-Auth-Email"})
        return "key", None

    def _check(self, request: Request, permission: str | None) -> JSONResponse | None:
        """Auth then the account/zone in the path, in Cloudflare's order (auth first)."""
        _, denied = self._auth(request, permission)
        if denied:
            return denied
        params = request.path_params
        scope, scope_id = params.get("scope"), params.get("scope_id")
        account = params.get("account_id") or (scope_id if scope == "accounts" else None)
        zone = params.get("zone_id") or (scope_id if scope == "zones" else None)
        if scope not in (None, "accounts", "zones"):
            return _route_error(request.url.path)
        if account is not None and account != ACCOUNT_ID:
            return _route_error(request.url.path)
        if zone is not None and not any(z["id"] == zone for z in ZONES):
            return _route_error(request.url.path)
        return None

    async def verify_user_token(self, request: Request) -> Response:
        kind, denied = self._auth(request, None)
        if denied and denied.status_code == 403:
            return cf_error(401, {"code": 1000, "message": "Invalid API Token"})
        if denied:
            return denied
        if kind != "user":
            return cf_error(401, {"code": 1000, "message": "Invalid API Token"})
        return self._verified()

    async def verify_account_token(self, request: Request) -> Response:
        kind, denied = self._auth(request, None)
        if denied:
            return (
                denied if denied.status_code != 403 else cf_error(401, {"code": 1000, "message": "Invalid API Token"})
            )
        if request.path_params["account_id"] != ACCOUNT_ID:
            return _route_error(request.url.path)
        if kind != "account":
            return cf_error(401, {"code": 1000, "message": "Invalid API Token"})
        return self._verified()

    def _verified(self) -> JSONResponse:
        return _envelope(
            {"id": "ed17574386854bf78a67040be0a770b0", "status": self.token_status},
            messages=[{"code": 10000, "message": "This API Token is valid and active", "type": None}],
        )

    # --- resources --------------------------------------------------------------------------------------------
    async def list_audit_logs(self, request: Request) -> Response:
        denied = self._check(request, "audit_logs")
        if denied:
            return denied
        q = request.query_params
        items = list(self.audit_logs)
        if q.get("actor.email"):
            items = [i for i in items if _at(i, "actor", "email") == q["actor.email"]]
        if q.get("actor.ip"):
            network = ip_network(q["actor.ip"], strict=False)
            items = [i for i in items if _in_network(_at(i, "actor", "ip"), network)]
        if q.get("zone.name"):
            items = [i for i in items if _at(i, "metadata", "zone_name") == q["zone.name"]]
        if q.get("action.type"):
            items = [i for i in items if _at(i, "action", "type") == q["action.type"]]
        if q.get("since"):
            items = [i for i in items if str(i.get("when", "")) >= q["since"]]
        if q.get("before"):
            items = [i for i in items if str(i.get("when", "")) < q["before"]]
        items.sort(key=lambda i: str(i.get("when", "")), reverse=q.get("direction", "desc") == "desc")
        return _page(request, items, 100)

    async def list_insights(self, request: Request) -> Response:
        denied = self._check(request, "security_insights")
        if denied:
            return denied
        q = request.query_params
        items = [i for i in self.insights if bool(i.get("dismissed")) == (q.get("dismissed") == "true")]
        if request.path_params["scope"] == "zones":
            items = [i for i in items if _at(i, "payload", "zone_tag") == request.path_params["scope_id"]]
        if q.get("severity"):
            items = [i for i in items if str(i.get("severity", "")).lower() == q["severity"]]
        if q.get("issue_type"):
            items = [i for i in items if i.get("issue_type") == q["issue_type"]]
        page, per_page = int(q.get("page") or 1), int(q.get("per_page") or 25)
        window = items[(page - 1) * per_page : page * per_page]
        return _envelope({"count": len(items), "page": page, "per_page": per_page, "issues": window})

    async def access_apps(self, request: Request) -> Response:
        denied = self._check(request, "access_apps")
        if denied:
            return denied
        items = ACCESS_APPS
        if request.path_params["scope"] == "zones":
            items = [a for a in items if a.get("zone_id") == request.path_params["scope_id"]]
        return _page(request, [{k: v for k, v in a.items() if k != "zone_id"} for a in items], 25)

    async def list_zones(self, request: Request) -> Response:
        denied = self._check(request, "zone")
        if denied:
            return denied
        q = request.query_params
        items = [z for z in ZONES if not q.get("account.id") or z["account"]["id"] == q["account.id"]]
        items = [z for z in items if not q.get("name") or z["name"] == q["name"]]
        items = [z for z in items if not q.get("status") or z["status"] == q["status"]]
        return _page(request, items, 20)

    async def get_zone(self, request: Request) -> Response:
        denied = self._check(request, "zone")
        if denied:
            return denied
        return _envelope(next(z for z in ZONES if z["id"] == request.path_params["zone_id"]))

    def _rule(self, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": secrets.token_hex(16),
            "version": "1",
            "action": body["action"],
            "expression": body["expression"],
            "description": body.get("description", ""),
            "enabled": body.get("enabled", True),
            "ref": body.get("ref") or secrets.token_hex(16),
            "last_updated": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        }

    def _invalid_rule(self, body: Any, pointer: str) -> JSONResponse | None:
        if not isinstance(body, dict) or not body.get("expression") or not body.get("action"):
            return cf_error(
                400,
                {
                    "code": 20021,
                    "message": "'expression' and 'action' are required",
                    "source": {"pointer": pointer},
                },
            )
        return None

    async def entrypoint(self, request: Request) -> Response:
        denied = self._check(request, "rulesets")
        if denied:
            return denied
        params = request.path_params
        key = (params["scope_id"], params["phase"])
        if request.method == "GET":
            ruleset = self.rulesets.get(key)
            if ruleset is None:
                return cf_error(404, {"code": 10003, "message": "could not find entrypoint ruleset in the phase"})
            return _envelope(ruleset)
        body = await request.json()
        rules = body.get("rules") if isinstance(body, dict) else None
        for index, rule in enumerate(rules or []):
            invalid = self._invalid_rule(rule, f"/rules/{index}")
            if invalid:
                return invalid
        ruleset = {
            "id": uuid.uuid4().hex,
            "name": "default",
            "description": "",
            "kind": "zone" if params["scope"] == "zones" else "root",
            "phase": params["phase"],
            "version": "1",
            "last_updated": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "rules": [self._rule(r) for r in rules or []],
        }
        self.rulesets[key] = ruleset
        return _envelope(ruleset)

    async def add_rule(self, request: Request) -> Response:
        denied = self._check(request, "rulesets")
        if denied:
            return denied
        ruleset = next((r for r in self.rulesets.values() if r["id"] == request.path_params["ruleset_id"]), None)
        if ruleset is None:
            return cf_error(404, {"code": 10003, "message": "could not find ruleset"})
        body = await request.json()
        invalid = self._invalid_rule(body, "/rules/0")
        if invalid:
            return invalid
        ruleset["rules"].append(self._rule(body))
        ruleset["version"] = str(int(ruleset["version"]) + 1)
        return _envelope(ruleset)


# --- evaluation scenarios ---------------------------------------------------------------------------------------

#: Connection fields (API token) that authenticate at this fake.
CONNECTION_VALUES = {"auth_method": "api_token", "api_token": USER_TOKEN, "account_id": ACCOUNT_ID}


class CloudflareData(ScenarioData):
    audit_logs: list[dict[str, Any]] = Field(default_factory=list)
    insights: list[dict[str, Any]] = Field(default_factory=list)


class CloudflareScenarioFake(ScenarioFake[CloudflareFake, CloudflareData]):
    integration_id = "cloudflare"

    def connection_values(self) -> dict[str, str]:
        return dict(CONNECTION_VALUES)

    def load(self, data: CloudflareData) -> None:
        self.fake.load(audit_logs=data.audit_logs, insights=data.insights)

    def write_requests(self) -> list[str]:
        """Changes to rulesets (edge rules)."""
        return [
            f"Cloudflare {r.method} {r.path}"
            for r in self.fake.requests
            if r.method in ("PUT", "POST", "PATCH", "DELETE") and "/rulesets" in r.path
        ]


SCENARIO_FAKE = CloudflareScenarioFake
