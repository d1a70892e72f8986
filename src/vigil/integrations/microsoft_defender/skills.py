"""Defender for Endpoint skills: machines, alerts, advanced hunting, live response and isolation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field, IPvAnyAddress, field_validator

from vigil.integrations.framework import SkillContext, SkillInput, SkillOutput, VendorRecord, optional, skill
from vigil.integrations.microsoft_defender.client import DefenderClient, odata_literal
from vigil.integrations.microsoft_defender.models import (
    Alert,
    AlertSeverity,
    AlertStatus,
    CommandParam,
    IsolationType,
    LiveResponseCommandType,
    Machine,
    MachineAction,
)
from vigil.integrations.query import utc_timestamp

INTEGRATION_ID = "microsoft_defender"


async def _odata_list(ctx: SkillContext, path: str, clauses: list[str], top: int, **extra: str) -> list[dict[str, Any]]:
    """Up to ``top`` items of a list endpoint, filtered by every clause (``$filter`` joins them with ``and``)."""
    params = {"$top": str(top), **extra}
    if clauses:
        params["$filter"] = " and ".join(clauses)
    return await DefenderClient(ctx).list(path, params, max_items=top)


async def _machine_action(ctx: SkillContext, machine_id: str, action: str, body: dict[str, Any]) -> MachineActionOutput:
    """Starts a machine action (``/api/machines/{id}/{action}``); Defender answers with the action to follow."""
    created = await DefenderClient(ctx).post_json(f"/api/machines/{machine_id.strip()}/{action}", body)
    return MachineActionOutput(action=MachineAction.model_validate(created))


class ListMachinesInput(SkillInput):
    hostname: str | None = optional("Machine name or its start, matched case-insensitively against the DNS name.")
    ip: IPvAnyAddress | None = optional("Last internal IP address of the machine.")
    machine_id: str | None = optional("Defender machine ID.")
    top: int = Field(default=50, ge=1, le=10_000, description="Maximum number of machines to return.")


class ListMachinesOutput(SkillOutput):
    machines: list[Machine] = Field(description="Machines matching every given filter.")
    count: int = Field(description="Number of machines returned.")


@skill(
    integration=INTEGRATION_ID,
    id="microsoft_defender.list_machines",
    name="List Machines",
    purpose="Lists onboarded machines, optionally filtered by host name, IP address or machine ID.",
    permissions=("Machine.Read.All (or Machine.ReadWrite.All)",),
    writes=False,
)
async def list_machines(ctx: SkillContext, params: ListMachinesInput) -> ListMachinesOutput:
    clauses = []
    if params.hostname:
        clauses.append(f"startswith(computerDnsName,{odata_literal(params.hostname.strip().lower())})")
    if params.ip:
        clauses.append(f"lastIpAddress eq {odata_literal(str(params.ip))}")
    if params.machine_id:
        clauses.append(f"id eq {odata_literal(params.machine_id.strip())}")
    items = await _odata_list(ctx, "/api/machines", clauses, params.top)
    machines = [Machine.model_validate(item) for item in items]
    return ListMachinesOutput(machines=machines, count=len(machines))


class FetchAlertsInput(SkillInput):
    severity: AlertSeverity | None = optional("Only alerts of this severity: Informational, Low, Medium, High.")
    status: AlertStatus | None = optional("Only alerts in this status: New, InProgress, Resolved.")
    since: datetime | None = optional("Only alerts created at or after this time (ISO 8601; UTC if no offset).")
    machine_id: str | None = optional("Only alerts of this machine (uses the machine's alerts endpoint).")
    include_evidence: bool = Field(default=False, description="Also return each alert's evidence.")
    top: int = Field(default=100, ge=1, le=10_000, description="Maximum number of alerts to return.")


class FetchAlertsOutput(SkillOutput):
    alerts: list[Alert] = Field(description="Alerts matching every given filter.")
    count: int = Field(description="Number of alerts returned.")


@skill(
    integration=INTEGRATION_ID,
    id="microsoft_defender.fetch_alerts",
    name="Fetch Alerts",
    purpose="Fetches security alerts, filterable by severity, status, creation time and machine.",
    permissions=("Alert.Read.All (or Alert.ReadWrite.All)",),
    writes=False,
)
async def fetch_alerts(ctx: SkillContext, params: FetchAlertsInput) -> FetchAlertsOutput:
    clauses = []
    if params.severity:
        clauses.append(f"severity eq {odata_literal(params.severity.value)}")
    if params.status:
        clauses.append(f"status eq {odata_literal(params.status.value)}")
    if params.since:
        clauses.append(f"alertCreationTime ge {utc_timestamp(params.since)}")
    extra = {"$expand": "evidence"} if params.include_evidence else {}
    # machineId is not filterable on /api/alerts; one machine's alerts have their own endpoint.
    path = f"/api/machines/{params.machine_id.strip()}/alerts" if params.machine_id else "/api/alerts"
    items = await _odata_list(ctx, path, clauses, params.top, **extra)
    alerts = [Alert.model_validate(item) for item in items]
    return FetchAlertsOutput(alerts=alerts, count=len(alerts))


class AdvancedHuntingInput(SkillInput):
    query: str = Field(
        min_length=1, description="KQL query over the last 30 days, e.g. DeviceProcessEvents | limit 10."
    )


class HuntingColumn(VendorRecord):
    name: str = Field(validation_alias="Name", description="Column name.")
    type: str = Field(validation_alias="Type", description="Column type, e.g. DateTime or String.")


class AdvancedHuntingOutput(SkillOutput):
    columns: list[HuntingColumn] = Field(description="Result schema, in column order.")
    results: list[dict[str, Any]] = Field(description="Result rows keyed by column name.")
    row_count: int = Field(description="Number of rows returned (the API caps results at 100,000).")


@skill(
    integration=INTEGRATION_ID,
    id="microsoft_defender.run_advanced_hunting_query",
    name="Run Advanced Hunting Query",
    purpose="Runs an advanced hunting (KQL) query and returns its rows.",
    permissions=("AdvancedQuery.Read.All",),
    writes=False,
)
async def run_advanced_hunting_query(ctx: SkillContext, params: AdvancedHuntingInput) -> AdvancedHuntingOutput:
    body = await DefenderClient(ctx).post_json("/api/advancedqueries/run", {"Query": params.query}, idempotent=True)
    schema = body.get("Schema") or []
    results = body.get("Results") or []
    rows = [row for row in results if isinstance(row, dict)]
    return AdvancedHuntingOutput(
        columns=[HuntingColumn.model_validate(column) for column in schema], results=rows, row_count=len(rows)
    )


_ALLOWED_PARAMS = {
    LiveResponseCommandType.PUT_FILE: {"FileName"},
    LiveResponseCommandType.RUN_SCRIPT: {"ScriptName", "Args"},
    LiveResponseCommandType.GET_FILE: {"Path"},
}


class LiveResponseCommand(SkillInput):
    type: LiveResponseCommandType = Field(description="PutFile, RunScript or GetFile.")
    params: list[CommandParam] = Field(
        min_length=1, description="PutFile: FileName; RunScript: ScriptName and optional Args; GetFile: Path."
    )

    @field_validator("params")
    @classmethod
    def _known_keys(cls, params: list[CommandParam], info: Any) -> list[CommandParam]:
        kind = info.data.get("type")
        allowed = _ALLOWED_PARAMS.get(kind, set()) if kind else set()
        unknown = [p.key for p in params if allowed and p.key not in allowed]
        if unknown:
            raise ValueError(f"{kind} takes {', '.join(sorted(allowed))}, not {', '.join(unknown)}")
        return params


class MachineLiveResponseInput(SkillInput):
    machine_id: str = Field(min_length=1, description="Defender machine ID to run the commands on.")
    commands: list[LiveResponseCommand] = Field(
        min_length=1, description="Commands run in order (PutFile, then RunScript, then GetFile)."
    )
    comment: str = Field(min_length=1, description="Why the session is run; recorded in the action center.")


class MachineActionOutput(SkillOutput):
    action: MachineAction = Field(description="The machine action Defender created; follow it by its ID.")


@skill(
    integration=INTEGRATION_ID,
    id="microsoft_defender.machine_live_response",
    name="Machine Live Response",
    purpose="Starts a live response session on a machine running PutFile/RunScript/GetFile commands.",
    permissions=("Machine.LiveResponse",),
    writes=True,
)
async def machine_live_response(ctx: SkillContext, params: MachineLiveResponseInput) -> MachineActionOutput:
    body = {
        "Commands": [
            {"type": c.type.value, "params": [{"key": p.key, "value": p.value} for p in c.params]}
            for c in params.commands
        ],
        "Comment": params.comment,
    }
    return await _machine_action(ctx, params.machine_id, "runliveresponse", body)


class IsolateMachineInput(SkillInput):
    machine_id: str = Field(min_length=1, description="Defender machine ID to isolate.")
    isolation_type: IsolationType = Field(
        default=IsolationType.FULL, description="Full cuts all traffic; Selective keeps Outlook, Teams and Skype."
    )
    comment: str = Field(min_length=1, description="Why the machine is isolated; recorded in the action center.")


@skill(
    integration=INTEGRATION_ID,
    id="microsoft_defender.isolate_machine",
    name="Isolate Machine",
    purpose="Isolates a machine from the network (Full or Selective) until it is released.",
    permissions=("Machine.Isolate",),
    writes=True,
)
async def isolate_machine(ctx: SkillContext, params: IsolateMachineInput) -> MachineActionOutput:
    body = {"Comment": params.comment, "IsolationType": params.isolation_type.value}
    return await _machine_action(ctx, params.machine_id, "isolate", body)
