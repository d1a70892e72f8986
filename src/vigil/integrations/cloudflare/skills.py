"""Cloudflare skills: audit logs, Security Center insights, Access applications, zones and WAF ruleset rules."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import Field, IPvAnyNetwork

from vigil.integrations.cloudflare.client import CloudflareClient, Envelope, result_array
from vigil.integrations.cloudflare.models import (
    AccessApplication,
    AuditLogEntry,
    Insight,
    InsightSeverity,
    RuleAction,
    Ruleset,
    RulesetPhase,
    RulesetRule,
    Zone,
)
from vigil.integrations.errors import UNEXPECTED_RESPONSE
from vigil.integrations.framework import SkillContext, SkillInput, SkillOutput, optional, skill
from vigil.integrations.pagination import PageInfo
from vigil.integrations.query import given, utc_timestamp

INTEGRATION_ID = "cloudflare"


class PagingInput(SkillInput):
    page: int = Field(default=1, ge=1, description="First page to fetch (1-based).")
    pages: int = Field(default=1, ge=1, le=50, description="How many consecutive pages to fetch at most.")


class AuditLogsInput(PagingInput):
    since: datetime | None = optional("Only entries at or after this time (ISO 8601; UTC if no offset).")
    before: datetime | None = optional("Only entries before this time (ISO 8601; UTC if no offset).")
    per_page: int = Field(default=100, ge=1, le=1000, description="Entries per page (max 1000).")


class DetectionAuditLogsInput(AuditLogsInput):
    actor_email: str | None = optional("Only actions by this user email.")
    actor_ip: IPvAnyNetwork | None = optional("Only actions from this IP address or CIDR range.")
    zone: str | None = optional("Only actions on this zone name, e.g. example.com.")
    action_type: str | None = optional("Only this action type, e.g. add, change_setting, delete.")


class AuditLogsOutput(SkillOutput):
    entries: list[AuditLogEntry] = Field(description="Audit log entries, newest first.")
    page_info: PageInfo = Field(description="Paging position; request next_page to continue.")


async def _pages(
    client: CloudflareClient,
    path: str,
    query: Mapping[str, Any],
    params: AuditLogsInput | InsightsInput | ZoneDetailsInput,
    envelope: Envelope = result_array,
) -> tuple[list[dict[str, Any]], PageInfo]:
    """The pages of a listing that the skill's paging input asks for."""
    return await client.paged_list(
        path, query, page=params.page, per_page=params.per_page, max_pages=params.pages, envelope=envelope
    )


async def _audit_logs(ctx: SkillContext, params: AuditLogsInput, filters: dict[str, Any]) -> AuditLogsOutput:
    client = CloudflareClient(ctx)
    query: dict[str, Any] = {"direction": "desc", **filters}
    if params.since:
        query["since"] = utc_timestamp(params.since)
    if params.before:
        query["before"] = utc_timestamp(params.before)
    items, info = await _pages(client, f"/accounts/{client.account_id}/audit_logs", query, params)
    return AuditLogsOutput(entries=[AuditLogEntry.model_validate(i) for i in items], page_info=info)


@skill(
    integration=INTEGRATION_ID,
    id="cloudflare.edge_get_account_audit_logs_for_detections",
    name="Edge Get Account Audit Logs for Detections",
    purpose="Audit logs for detection use, filtered by actor email or IP, time range and zone, with pagination.",
    permissions=("Audit Logs (Account: Read)", "Account Settings (Account: Read)"),
    writes=False,
)
async def audit_logs_for_detections(ctx: SkillContext, params: DetectionAuditLogsInput) -> AuditLogsOutput:
    filters = {
        "actor.email": params.actor_email,
        "actor.ip": str(params.actor_ip) if params.actor_ip else None,
        "zone.name": params.zone,
        "action.type": params.action_type,
    }
    return await _audit_logs(ctx, params, given(filters))


@skill(
    integration=INTEGRATION_ID,
    id="cloudflare.get_edge_audit_logs",
    name="Get Edge Audit Logs",
    purpose="Fetches account audit logs of changes and activities.",
    permissions=("Audit Logs (Account: Read)",),
    writes=False,
)
async def get_audit_logs(ctx: SkillContext, params: AuditLogsInput) -> AuditLogsOutput:
    return await _audit_logs(ctx, params, {})


class InsightsInput(PagingInput):
    zone_id: str | None = optional("Zone ID for one zone's insights; account-wide when empty.")
    severity: InsightSeverity | None = optional("Only this severity: low, moderate or critical.")
    issue_type: str | None = optional("Only this type, e.g. insecure_configuration or exposed_infrastructure.")
    dismissed: bool = Field(default=False, description="Return dismissed insights instead of open ones.")
    per_page: int = Field(default=25, ge=1, le=1000, description="Insights per page.")


class InsightsOutput(SkillOutput):
    insights: list[Insight] = Field(description="Security Center insights (issues).")
    page_info: PageInfo = Field(description="Paging position; request next_page to continue.")


@skill(
    integration=INTEGRATION_ID,
    id="cloudflare.get_edge_security_center_insights",
    name="Get Edge Security Center Insights",
    purpose="Fetches Security Center insights for the account or one zone.",
    permissions=("Security Insights (Account: Read)", "Zone WAF (Zone: Read)"),
    writes=False,
)
async def get_security_center_insights(ctx: SkillContext, params: InsightsInput) -> InsightsOutput:
    client = CloudflareClient(ctx)
    path = f"{client.scope_path(params.zone_id)}/security-center/insights"
    query: dict[str, Any] = {"dismissed": str(params.dismissed).lower()}
    if params.severity:
        query["severity"] = params.severity.value
    if params.issue_type:
        query["issue_type"] = params.issue_type
    items, info = await _pages(client, path, query, params, envelope=_security_center_issues)
    return InsightsOutput(insights=[Insight.model_validate(i) for i in items], page_info=info)


def _security_center_issues(body: Mapping[str, Any]) -> tuple[list[dict[str, Any]], Mapping[str, Any]]:
    result = body.get("result")  # an object {count, page, per_page, issues}, not an array
    if not isinstance(result, dict):
        raise UNEXPECTED_RESPONSE.error("Security Center answered without a result object.")
    issues = [i for i in result.get("issues") or [] if isinstance(i, dict)]
    return issues, {"total_count": result.get("count")}


class AccessAppsInput(SkillInput):
    zone_id: str | None = optional("Zone ID for the zone's applications; account-wide when empty.")
    name: str | None = optional("Only applications whose name contains this text (case-insensitive).")
    domain: str | None = optional("Only applications whose domain contains this text (case-insensitive).")


class AccessAppsOutput(SkillOutput):
    applications: list[AccessApplication] = Field(description="Access applications matching the filters.")
    count: int = Field(description="Number of applications returned.")


_ACCESS_APPS_PAGE = 100
_ACCESS_APPS_MAX_PAGES = 20


@skill(
    integration=INTEGRATION_ID,
    id="cloudflare.list_edge_access_applications",
    name="List Edge Access Applications",
    purpose="Lists Zero Trust Access applications of the account or a zone, filtered by name or domain.",
    permissions=("Access: Apps and Policies (Account: Read)", "Zone (Zone: Read)"),
    writes=False,
)
async def list_access_applications(ctx: SkillContext, params: AccessAppsInput) -> AccessAppsOutput:
    client = CloudflareClient(ctx)
    items, _ = await client.paged_list(
        f"{client.scope_path(params.zone_id)}/access/apps",
        {},
        page=1,
        per_page=_ACCESS_APPS_PAGE,
        max_pages=_ACCESS_APPS_MAX_PAGES,
    )
    apps = [AccessApplication.model_validate(i) for i in items]
    # The reference documents no server-side name/domain filters for this listing, so they apply here.
    if params.name:
        apps = [a for a in apps if params.name.lower() in (a.name or "").lower()]
    if params.domain:
        wanted = params.domain.lower()
        apps = [a for a in apps if any(wanted in d.lower() for d in [a.domain or "", *a.self_hosted_domains])]
    return AccessAppsOutput(applications=apps, count=len(apps))


class ZoneDetailsInput(PagingInput):
    zone_id: str | None = optional("Zone ID to fetch one zone; when empty, zones of the account are listed.")
    name: str | None = optional("Only the zone with this domain name (when listing).")
    status: str | None = optional("Only zones in this status: initializing, pending, active or moved.")
    per_page: int = Field(default=20, ge=5, le=50, description="Zones per page (5-50).")


class ZoneDetailsOutput(SkillOutput):
    zones: list[Zone] = Field(description="The requested zone, or the zones matching the filters.")
    page_info: PageInfo | None = optional("Paging position when listing; null for a single zone.")


@skill(
    integration=INTEGRATION_ID,
    id="cloudflare.get_edge_zone_details",
    name="Get Edge Zone Details",
    purpose="Gets zones of the account with optional name/status filters, or one zone by ID.",
    permissions=("Zone (Zone: Read)", "Zone Settings (Zone: Read)"),
    writes=False,
)
async def get_zone_details(ctx: SkillContext, params: ZoneDetailsInput) -> ZoneDetailsOutput:
    client = CloudflareClient(ctx)
    if params.zone_id:
        body = await client.get(f"/zones/{params.zone_id}")
        return ZoneDetailsOutput(zones=[Zone.model_validate(body.get("result"))])
    filters = {"account.id": client.account_id, "name": params.name, "status": params.status}
    items, info = await _pages(client, "/zones", given(filters), params)
    return ZoneDetailsOutput(zones=[Zone.model_validate(i) for i in items], page_info=info)


class CreateRuleInput(SkillInput):
    zone_id: str | None = optional("Zone ID for a zone rule; an account-level rule when empty.")
    ruleset_id: str | None = optional("Ruleset to add to; when empty, the phase's entry point ruleset is used.")
    phase: RulesetPhase = Field(
        default=RulesetPhase.HTTP_REQUEST_FIREWALL_CUSTOM, description="Phase of the entry point ruleset."
    )
    expression: str = Field(min_length=1, description="Rules language expression, e.g. ip.src eq 203.0.113.7.")
    action: RuleAction = Field(default=RuleAction.BLOCK, description="What to do on match, e.g. block.")
    description: str = Field(default="", description="Rule description shown in the dashboard.")
    enabled: bool = Field(default=True, description="Whether the rule is active immediately.")


class CreateRuleOutput(SkillOutput):
    ruleset: Ruleset = Field(description="The ruleset after the rule was added.")
    rule: RulesetRule = Field(description="The rule that was created.")


@skill(
    integration=INTEGRATION_ID,
    id="cloudflare.create_edge_ruleset_rule",
    name="Create Edge Ruleset Rule",
    purpose="Creates a rule (e.g. a WAF custom block) in a ruleset of the account or a zone.",
    permissions=("Account Rulesets (Account: Edit)", "Zone WAF (Zone: Edit)"),
    writes=True,
)
async def create_ruleset_rule(ctx: SkillContext, params: CreateRuleInput) -> CreateRuleOutput:
    client = CloudflareClient(ctx)
    scope = client.scope_path(params.zone_id)
    ref = f"vigil_{uuid.uuid4().hex}"  # lets us find our rule in the returned ruleset
    rule = {
        "action": params.action.value,
        "expression": params.expression,
        "description": params.description,
        "enabled": params.enabled,
        "ref": ref,
    }
    ruleset_id = params.ruleset_id
    if ruleset_id is None:
        entrypoint = f"{scope}/rulesets/phases/{params.phase.value}/entrypoint"
        existing = await client.request("GET", entrypoint, allow_not_found=True)
        if existing is None:  # no entry point yet: creating it with our rule is the documented way
            body = await client.request("PUT", entrypoint, json={"rules": [rule]})
            return _created(body, ref)
        ruleset_id = str((existing.get("result") or {}).get("id") or "")
    body = await client.request("POST", f"{scope}/rulesets/{ruleset_id}/rules", json=rule)
    return _created(body, ref)


def _created(body: Any, ref: str) -> CreateRuleOutput:
    ruleset = Ruleset.model_validate((body or {}).get("result"))
    rule = next((r for r in ruleset.rules if r.ref == ref), None)
    if rule is None:
        raise UNEXPECTED_RESPONSE.error("Cloudflare accepted the rule but did not return it in the ruleset.")
    return CreateRuleOutput(ruleset=ruleset, rule=rule)
