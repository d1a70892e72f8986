"""Loopback fake of Microsoft Entra ID's token endpoint and the Defender for Endpoint API (reference A)."""

from __future__ import annotations

import copy
import re
import secrets
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vigil.integrations.fakes import ScenarioData, ScenarioFake, StatefulFakeVendor, form_of
from vigil.integrations.microsoft_defender import fake_kql

TENANT_ID = "8f3f7c2e-5a2b-4f5e-9c1d-0a1b2c3d4e5f"
CLIENT_ID = "4a7e2d61-93c2-4b8e-a1f0-5d6c7b8a9e01"
CLIENT_SECRET = "Xy8Q~s3cr3t.Value_For-Tests~0123456789ab"
ALL_ROLES = frozenset(
    {
        "Machine.ReadWrite.All",
        "Alert.ReadWrite.All",
        "AdvancedQuery.Read.All",
        "Machine.LiveResponse",
        "Machine.Isolate",
    }
)

MACHINES: list[dict[str, Any]] = [
    {
        "id": "1e5bc9d7e413ddd7902c2932e418702b84d0cc07",
        "computerDnsName": "mymachine1.contoso.com",
        "firstSeen": "2018-08-02T14:55:03.7791856Z",
        "lastSeen": "2024-05-21T10:31:12.3390000Z",
        "osPlatform": "Windows10",
        "version": "1709",
        "osProcessor": "x64",
        "osBuild": 18209,
        "lastIpAddress": "172.17.230.209",
        "lastExternalIpAddress": "167.220.196.71",
        "healthStatus": "Active",
        "onboardingStatus": "onboarded",
        "rbacGroupId": 140,
        "rbacGroupName": "The-A-Team",
        "riskScore": "Low",
        "exposureLevel": "Medium",
        "isAadJoined": True,
        "aadDeviceId": "80fe8ff8-2624-418e-9591-41f0491218f9",
        "machineTags": ["test tag 1", "test tag 2"],
        "deviceValue": "Normal",
        "ipAddresses": [{"ipAddress": "172.17.230.209", "macAddress": "8CEC4B897E73", "operationalStatus": "Up"}],
        "osArchitecture": "64-bit",
    },
    {
        "id": "7292e4b8cb74ff1cc3d8a495eb29dc8858b732f7",
        "computerDnsName": "finance-ws-02.contoso.com",
        "firstSeen": "2021-03-10T08:12:44.1200000Z",
        "lastSeen": "2024-05-21T09:02:55.0010000Z",
        "osPlatform": "Windows11",
        "version": "22H2",
        "lastIpAddress": "10.20.4.17",
        "lastExternalIpAddress": "203.0.113.24",
        "healthStatus": "Active",
        "onboardingStatus": "onboarded",
        "rbacGroupName": "Finance",
        "riskScore": "High",
        "exposureLevel": "High",
        "aadDeviceId": None,
        "machineTags": ["finance"],
        "deviceValue": "High",
        "ipAddresses": [],
    },
    {
        "id": "04c99d46599f078f1c3da3783cf5b95f01ac61bb",
        "computerDnsName": "build-srv-01.contoso.com",
        "firstSeen": "2020-11-01T00:00:00.0000000Z",
        "lastSeen": "2024-04-30T22:10:01.5000000Z",
        "osPlatform": "WindowsServer2019",
        "lastIpAddress": "10.20.9.5",
        "healthStatus": "Inactive",
        "onboardingStatus": "onboarded",
        "riskScore": "Medium",
        "exposureLevel": "Low",
        "machineTags": [],
        "deviceValue": "Normal",
    },
]

ALERTS: list[dict[str, Any]] = [
    {
        "id": "da637472900382838869_1364969609",
        "incidentId": 1126093,
        "investigationId": None,
        "assignedTo": None,
        "severity": "Low",
        "status": "New",
        "classification": None,
        "determination": None,
        "investigationState": "Queued",
        "detectionSource": "WindowsDefenderAtp",
        "detectorId": "17e10bbc-3a68-474a-8aad-faef14d43952",
        "category": "Execution",
        "threatFamilyName": None,
        "title": "Low-reputation arbitrary code executed by signed executable",
        "description": "Binaries signed by Microsoft can be used to run low-reputation arbitrary code.",
        "alertCreationTime": "2021-01-26T20:33:57.7220239Z",
        "firstEventTime": "2021-01-26T20:31:32.9562661Z",
        "lastEventTime": "2021-01-26T20:31:33.0577322Z",
        "lastUpdateTime": "2021-01-26T20:33:59.2Z",
        "resolvedTime": None,
        "machineId": "1e5bc9d7e413ddd7902c2932e418702b84d0cc07",
        "computerDnsName": "mymachine1.contoso.com",
        "rbacGroupName": "The-A-Team",
        "aadTenantId": TENANT_ID,
        "mitreTechniques": ["T1064", "T1085", "T1220"],
        "relatedUser": {"userName": "temp123", "domainName": "DOMAIN"},
        "comments": [],
        "evidence": [
            {
                "entityType": "File",
                "evidenceCreationTime": "2021-01-26T20:33:58.42Z",
                "sha1": "ff836cfb1af40252bd2a2ea843032e99a5b262ed",
                "sha256": "a4752c71d81afd3d5865d24ddb11a6b0c615062fcc448d24050c2172d2cbccd6",
                "fileName": "rundll32.exe",
                "filePath": "C:\\Windows\\SysWOW64",
                "detectionStatus": "Detected",
            }
        ],
    },
    {
        "id": "da637551227677560813_-961444813",
        "incidentId": 1126094,
        "severity": "High",
        "status": "InProgress",
        "detectionSource": "WindowsDefenderAv",
        "category": "SuspiciousActivity",
        "title": "Suspicious PowerShell command line",
        "alertCreationTime": "2024-05-20T11:02:41.0000000Z",
        "lastUpdateTime": "2024-05-20T11:40:00.0000000Z",
        "machineId": "7292e4b8cb74ff1cc3d8a495eb29dc8858b732f7",
        "computerDnsName": "finance-ws-02.contoso.com",
        "mitreTechniques": ["T1059.001"],
        "relatedUser": {"userName": "jdoe", "domainName": "CONTOSO"},
        "evidence": [],
    },
    {
        "id": "da637551227677560813_1029384756",
        "incidentId": 1126095,
        "severity": "Medium",
        "status": "Resolved",
        "classification": "FalsePositive",
        "detectionSource": "WindowsDefenderAtp",
        "category": "Execution",
        "title": "Unusual process execution",
        "alertCreationTime": "2024-05-21T07:15:00.0000000Z",
        "machineId": "7292e4b8cb74ff1cc3d8a495eb29dc8858b732f7",
        "computerDnsName": "finance-ws-02.contoso.com",
        "mitreTechniques": [],
        "evidence": [],
    },
]

HUNTING_RESULT = {
    "Schema": [
        {"Name": "Timestamp", "Type": "DateTime"},
        {"Name": "FileName", "Type": "String"},
        {"Name": "InitiatingProcessFileName", "Type": "String"},
    ],
    "Results": [
        {
            "Timestamp": "2024-05-20T11:02:40.1234567Z",
            "FileName": "powershell.exe",
            "InitiatingProcessFileName": "winword.exe",
        },
        {
            "Timestamp": "2024-05-20T11:02:39.7654321Z",
            "FileName": "cmd.exe",
            "InitiatingProcessFileName": "explorer.exe",
        },
    ],
}

_CLAUSE = re.compile(
    r"^(?:startswith\((?P<sfield>\w+),'(?P<svalue>(?:[^']|'')*)'\)"
    r"|(?P<field>\w+) (?P<op>eq|ne|ge|gt|le|lt) (?:'(?P<value>(?:[^']|'')*)'|(?P<bare>[0-9TZ:.\-]+)))$"
)


#: Kusto column types by the Python type of a value (a string that parses as ISO 8601 is a DateTime).
_KUSTO_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "Boolean"),
    (int, "Int64"),
    (float, "Double"),
    (dict, "Dynamic"),
    (list, "Dynamic"),
)


def _kusto_type(value: Any) -> str:
    for python_type, kusto in _KUSTO_TYPES:
        if isinstance(value, python_type):
            return kusto
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", value):
        return "DateTime"
    return "String"


def hunting_result(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """An advanced-hunting response for ``rows``: Schema from the rows' keys (first-seen order), then Results."""
    columns: dict[str, str | None] = {}
    for row in rows:
        for name, value in row.items():
            if columns.get(name) is None:
                columns[name] = None if value is None else _kusto_type(value)
    schema = [{"Name": name, "Type": kind or "String"} for name, kind in columns.items()]
    return {"Schema": schema, "Results": rows}


class ODataError(Exception):
    pass


def _matches(item: dict[str, Any], clause: str) -> bool:
    match = _CLAUSE.match(clause.strip())
    if match is None:
        raise ODataError(clause)
    if match["sfield"]:
        return str(item.get(match["sfield"]) or "").lower().startswith(match["svalue"].replace("''", "'").lower())
    actual = item.get(match["field"])
    expected = match["value"].replace("''", "'") if match["value"] is not None else match["bare"]
    if match["op"] in ("eq", "ne"):
        equal = str(actual) == expected
        return equal if match["op"] == "eq" else not equal
    if actual is None:
        return False
    left = datetime.fromisoformat(str(actual)[:19]).replace(tzinfo=UTC)
    right = datetime.fromisoformat(expected.rstrip("Z")[:19]).replace(tzinfo=UTC)
    return {"ge": left >= right, "gt": left > right, "le": left <= right, "lt": left < right}[match["op"]]


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, "target": str(uuid.uuid4())}}, status)


def _aad_error(status: int, error: str, code: int, description: str) -> JSONResponse:
    trace, correlation = str(uuid.uuid4()), str(uuid.uuid4())
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    return JSONResponse(
        {
            "error": error,
            "error_description": f"AADSTS{code}: {description}\r\nTrace ID: {trace}\r\n"
            f"Correlation ID: {correlation}\r\nTimestamp: {now}",
            "error_codes": [code],
            "timestamp": now,
            "trace_id": trace,
            "correlation_id": correlation,
            "error_uri": f"https://login.microsoftonline.com/error?code={code}",
        },
        status,
    )


class MdeFake(StatefulFakeVendor):
    """Token endpoint + /api. Control: ``expires_in``, ``roles`` (application permissions), ``page_size``.

    Data: ``machines``, ``alerts`` (module defaults after ``reset()``) and ``hunting``. A query that does not parse
    as KQL over Defender's tables (``fake_kql``) gets advanced hunting's 400 BadRequest. ``None`` answers every
    other query with ``HUNTING_RESULT``; a list of ``{"query_contains", "rows"}`` answers with the rows of the first
    entry whose substring occurs in the KQL (case-insensitive), and with no rows when none matches. ``load``
    replaces them for one scenario.
    """

    def reset(self) -> None:
        super().reset()
        self.expires_in = 3599
        self.roles: frozenset[str] = ALL_ROLES
        self.page_size = 10_000
        self.tokens: dict[str, float] = {}
        self.active_live_response: set[str] = set()
        self.machines: list[dict[str, Any]] = copy.deepcopy(MACHINES)
        self.alerts: list[dict[str, Any]] = copy.deepcopy(ALERTS)
        self.hunting: list[dict[str, Any]] | None = None

    def load(
        self,
        *,
        machines: list[dict[str, Any]] | None = None,
        alerts: list[dict[str, Any]] | None = None,
        hunting: list[dict[str, Any]] | None = None,
    ) -> None:
        """Serve exactly this data (an omitted list is served empty) until the next ``reset()``."""
        self.machines = copy.deepcopy(machines or [])
        self.alerts = copy.deepcopy(alerts or [])
        self.hunting = copy.deepcopy(hunting or [])

    def hunting_answer(self, query: str) -> dict[str, Any]:
        """What ``/api/advancedqueries/run`` returns for ``query``."""
        if self.hunting is None:
            return HUNTING_RESULT
        lowered = query.lower()
        for entry in self.hunting:
            if str(entry["query_contains"]).lower() in lowered:
                return hunting_result(list(entry.get("rows") or []))
        return hunting_result([])

    @property
    def token_requests(self) -> int:
        return len(self.requests_to("/oauth2/v2.0/token"))

    def revoke_tokens(self) -> None:
        """Make every issued token invalid, as if it expired server-side."""
        self.tokens.clear()

    def routes(self) -> list[Route]:
        return [
            self.route("/{tenant}/oauth2/v2.0/token", self.token, ["POST"]),
            self.route("/api/machines", self.list_machines, ["GET"]),
            self.route("/api/machines/{machine_id}/alerts", self.machine_alerts, ["GET"]),
            self.route("/api/alerts", self.list_alerts, ["GET"]),
            self.route("/api/advancedqueries/run", self.run_hunting, ["POST"]),
            self.route("/api/machines/{machine_id}/runliveresponse", self.live_response, ["POST"]),
            self.route("/api/machines/{machine_id}/isolate", self.isolate, ["POST"]),
        ]

    async def token(self, request: Request) -> Response:
        tenant = request.path_params["tenant"]
        form = await form_of(request)
        if tenant not in (TENANT_ID, "contoso.onmicrosoft.com"):
            return _aad_error(
                400,
                "invalid_request",
                90002,
                f"Tenant '{tenant}' not found. Check to make sure you have the correct tenant ID and are signing "
                "into the correct cloud.",
            )
        if form.get("grant_type") != "client_credentials":
            return _aad_error(400, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.")
        if form.get("client_id") != CLIENT_ID:
            return _aad_error(
                400,
                "unauthorized_client",
                700016,
                f"Application with identifier '{form.get('client_id')}' was not found in the directory "
                "'Contoso'. You may have sent your authentication request to the wrong tenant.",
            )
        secret = form.get("client_secret")
        if not secret:
            return _aad_error(
                401,
                "invalid_client",
                7000218,
                "The request body must contain: 'client_assertion' or 'client_secret'.",
            )
        if secret != CLIENT_SECRET:
            return _aad_error(
                401,
                "invalid_client",
                7000215,
                "Invalid client secret provided. Ensure the secret being sent in the request is the client secret "
                f"value, not the client secret ID, for a secret added to app '{CLIENT_ID}'.",
            )
        if not str(form.get("scope") or "").endswith("/.default"):
            return _aad_error(
                400, "invalid_scope", 70011, "The provided value for the input parameter 'scope' is not valid."
            )
        token = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9." + secrets.token_urlsafe(24)
        self.tokens[token] = time.monotonic() + self.expires_in
        return JSONResponse(
            {
                "token_type": "Bearer",
                "expires_in": self.expires_in,
                "ext_expires_in": self.expires_in,
                "access_token": token,
            }
        )

    def _unauthorized(self, request: Request, role: str) -> Response | None:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ") if header.startswith("Bearer ") else None
        expiry = self.tokens.get(token) if token else None
        if expiry is None or expiry < time.monotonic():
            return _error(401, "Unauthorized", "Authorization header is missing, invalid or expired.")
        if role not in self.roles:
            return _error(403, "Forbidden", f"Missing application roles. API required roles: {role}.")
        return None

    def _page(self, request: Request, items: list[dict[str, Any]], context: str) -> Response:
        params = request.query_params
        try:
            for clause in (params.get("$filter") or "").split(" and "):
                if clause.strip():
                    items = [i for i in items if _matches(i, clause)]
        except (ODataError, ValueError):
            return _error(400, "ODataError", "Invalid filter clause.")
        top = int(params.get("$top") or 10_000)
        skip = int(params.get("$skip") or 0)
        if params.get("$expand") != "evidence":
            items = [{**i, "evidence": []} for i in items]
        window = items[skip : skip + min(top, self.page_size)]
        body: dict[str, Any] = {"@odata.context": f"{self.url}/api/$metadata#{context}", "value": window}
        remaining = min(top, len(items) - skip) - len(window)
        if remaining > 0:
            query = "&".join(f"{k}={v}" for k, v in params.items() if k not in ("$skip", "$top"))
            body["@odata.nextLink"] = f"{self.url}{request.url.path}?$top={remaining}&$skip={skip + len(window)}" + (
                f"&{query}" if query else ""
            )
        return JSONResponse(body)

    async def list_machines(self, request: Request) -> Response:
        return self._unauthorized(request, "Machine.ReadWrite.All") or self._page(request, self.machines, "Machines")

    async def list_alerts(self, request: Request) -> Response:
        return self._unauthorized(request, "Alert.ReadWrite.All") or self._page(request, self.alerts, "Alerts")

    async def machine_alerts(self, request: Request) -> Response:
        denied = self._unauthorized(request, "Alert.ReadWrite.All")
        machine_id = request.path_params["machine_id"]
        if denied is None and not any(m.get("id") == machine_id for m in self.machines):
            return _error(404, "ResourceNotFound", f"Machine {machine_id} was not found")
        return denied or self._page(request, [a for a in self.alerts if a.get("machineId") == machine_id], "Alerts")

    async def run_hunting(self, request: Request) -> Response:
        denied = self._unauthorized(request, "AdvancedQuery.Read.All")
        if denied:
            return denied
        body = await request.json()
        if not isinstance(body, dict) or not body.get("Query"):
            return _error(400, "MissingRequiredParameter", "Query is missing")
        try:
            fake_kql.check(str(body["Query"]))
        except fake_kql.KqlError as error:
            return _error(400, "BadRequest", str(error))
        return JSONResponse(self.hunting_answer(str(body["Query"])))

    def _machine(self, machine_id: str) -> dict[str, Any] | None:
        return next((m for m in self.machines if m.get("id") == machine_id), None)

    def _action(self, machine: dict[str, Any], kind: str, comment: str, **extra: Any) -> dict[str, Any]:
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return {
            "@odata.context": f"{self.url}/api/$metadata#MachineActions/$entity",
            "id": str(uuid.uuid4()),
            "type": kind,
            "requestor": "vigil-app@contoso.com",
            "requestorComment": comment,
            "status": "Pending",
            "machineId": machine["id"],
            "computerDnsName": machine["computerDnsName"],
            "creationDateTimeUtc": now,
            "lastUpdateDateTimeUtc": now,
            "errorHResult": 0,
            **extra,
        }

    async def _machine_action_request(self, request: Request, role: str) -> Response | tuple[dict[str, Any], Any]:
        """The machine an action names and the request's JSON body, or the error the API answers first (a
        missing role, then an unknown machine)."""
        denied = self._unauthorized(request, role)
        if denied:
            return denied
        machine = self._machine(request.path_params["machine_id"])
        if machine is None:
            return _error(404, "ResourceNotFound", f"Machine {request.path_params['machine_id']} was not found")
        return machine, await request.json()

    async def live_response(self, request: Request) -> Response:
        checked = await self._machine_action_request(request, "Machine.LiveResponse")
        if isinstance(checked, Response):
            return checked
        machine, body = checked
        if not isinstance(body, dict) or "Commands" not in body or "Comment" not in body:
            return _error(400, "InvalidRequestBody", "Request body is missing Commands or Comment")
        if machine["id"] in self.active_live_response:
            return _error(400, "ActiveRequestAlreadyExists", "Cannot submit a new request while another is active")
        self.active_live_response.add(machine["id"])
        commands = [
            {
                "index": i,
                "startTime": None,
                "endTime": None,
                "commandStatus": "Created",
                "errors": [],
                "command": c,
            }
            for i, c in enumerate(body["Commands"])
        ]
        return JSONResponse(self._action(machine, "LiveResponse", body["Comment"], commands=commands), 201)

    async def isolate(self, request: Request) -> Response:
        checked = await self._machine_action_request(request, "Machine.Isolate")
        if isinstance(checked, Response):
            return checked
        machine, body = checked
        if not isinstance(body, dict) or not body.get("Comment"):
            return _error(400, "MissingRequiredParameter", "Comment is missing")
        if body.get("IsolationType", "Full") not in ("Full", "Selective", "UnManagedDevice"):
            return _error(400, "InvalidInput", "IsolationType is invalid")
        return JSONResponse(
            self._action(machine, "Isolate", body["Comment"], scope=body.get("IsolationType", "Full"), commands=[]),
            201,
        )


# --- evaluation scenarios ---------------------------------------------------------------------------------------

#: Connection fields that authenticate at this fake.
CONNECTION_VALUES = {"tenant_id": TENANT_ID, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}


class HuntingEntry(BaseModel):
    """Rows the fake returns for an advanced-hunting query whose KQL contains ``query_contains``."""

    model_config = ConfigDict(extra="forbid")

    query_contains: str = Field(min_length=1)
    rows: list[dict[str, Any]] = Field(default_factory=list)


class DefenderData(ScenarioData):
    machines: list[dict[str, Any]] = Field(default_factory=list)
    alerts: list[dict[str, Any]] = Field(default_factory=list)
    hunting: list[HuntingEntry] = Field(default_factory=list)


class DefenderScenarioFake(ScenarioFake[MdeFake, DefenderData]):
    integration_id = "microsoft_defender"

    def connection_values(self) -> dict[str, str]:
        return dict(CONNECTION_VALUES)

    def load(self, data: DefenderData) -> None:
        self.fake.load(
            machines=data.machines, alerts=data.alerts, hunting=[entry.model_dump() for entry in data.hunting]
        )

    def write_requests(self) -> list[str]:
        """Isolation and live response."""
        return [
            f"Defender {r.method} {r.path}"
            for r in self.fake.requests
            if r.path.endswith(("/isolate", "/runliveresponse"))
        ]


SCENARIO_FAKE = DefenderScenarioFake
