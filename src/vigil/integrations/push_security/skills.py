"""Push Security skills: list SaaS accounts seen by the browser agent, find the accounts of one email, and what
Push knows about one user (their findings and detections)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from pydantic import Field

from vigil.integrations.framework import SkillContext, SkillInput, SkillOutput, optional, skill
from vigil.integrations.push_security.client import PushClient
from vigil.integrations.push_security.models import PushAccount, PushDetection, PushFinding

INTEGRATION_ID = "push_security"
_EMAIL_PATTERN = r"^[^@\s]+@[^@\s]+$"


class ListAccountsInput(SkillInput):
    email: str | None = optional("Only accounts whose email matches (Push matches partially).")
    app_type: str | None = optional("Only accounts of this app, e.g. ATLASSIAN.")
    employee_id: str | None = optional("Only accounts of this employee (UUID).")
    password_id: str | None = optional("Only accounts using this password ID (finds password reuse).")
    last_used_after: datetime | None = optional("Only accounts used after this time (ISO 8601).")
    last_used_before: datetime | None = optional("Only accounts used before this time (ISO 8601).")
    limit: int = Field(default=100, ge=1, le=1000, description="Accounts per page.")
    next_token: str | None = optional("Continue from this token (next_token of a previous call).")
    max_pages: int = Field(default=10, ge=1, le=100, description="How many pages to fetch at most.")


class ListAccountsOutput(SkillOutput):
    accounts: list[PushAccount] = Field(description="Accounts matching every given filter.")
    count: int = Field(description="Number of accounts returned.")
    next_token: str | None = optional("Token to fetch more; null when everything was returned.")


@skill(
    integration=INTEGRATION_ID,
    id="push_security.list_accounts",
    name="List Accounts",
    purpose="Lists the SaaS accounts Push observed, filtered by email, app, employee, password or last use.",
    permissions=("API key: Read only",),
    writes=False,
)
async def list_accounts(ctx: SkillContext, params: ListAccountsInput) -> ListAccountsOutput:
    filters: dict[str, Any] = {
        "email": params.email,
        "appType": params.app_type,
        "employeeId": params.employee_id,
        "passwordId": params.password_id,
        "lastUsedTimestampAfter": int(params.last_used_after.timestamp()) if params.last_used_after else None,
        "lastUsedTimestampBefore": int(params.last_used_before.timestamp()) if params.last_used_before else None,
        "limit": params.limit,
    }
    items, token = await PushClient(ctx).list(
        "/accounts",
        {k: v for k, v in filters.items() if v is not None},
        next_token=params.next_token,
        max_pages=params.max_pages,
    )
    accounts = [PushAccount.model_validate(i) for i in items]
    return ListAccountsOutput(accounts=accounts, count=len(accounts), next_token=token)


class FindAccountByEmailInput(SkillInput):
    email: str = Field(pattern=_EMAIL_PATTERN, description="Email address to look up exactly (case-insensitive).")


class FindAccountByEmailOutput(SkillOutput):
    found: bool = Field(description="True when at least one account uses exactly this email.")
    accounts: list[PushAccount] = Field(description="Every app account registered with the email.")


_LOOKUP_PAGE = 100
_LOOKUP_MAX_PAGES = 10


@skill(
    integration=INTEGRATION_ID,
    id="push_security.find_account_by_email",
    name="Find Account by Email",
    purpose="Finds every SaaS account registered with one email address.",
    permissions=("API key: Read only",),
    writes=False,
)
async def find_account_by_email(ctx: SkillContext, params: FindAccountByEmailInput) -> FindAccountByEmailOutput:
    accounts = await _accounts_with_email(PushClient(ctx), params.email)
    return FindAccountByEmailOutput(found=bool(accounts), accounts=accounts)


async def _accounts_with_email(client: PushClient, email: str) -> list[PushAccount]:
    """Accounts registered with exactly ``email`` (case-insensitive)."""
    wanted = email.strip().lower()
    items, _ = await client.list(
        "/accounts", {"email": wanted, "limit": _LOOKUP_PAGE}, next_token=None, max_pages=_LOOKUP_MAX_PAGES
    )
    # Push's email filter is partial; only exact matches are the same person.
    return [a for a in map(PushAccount.model_validate, items) if (a.email or "").lower() == wanted]


class GetSecurityFindingsByEmailInput(SkillInput):
    email: str = Field(
        pattern=_EMAIL_PATTERN, description="Email address of the user, matched exactly (case-insensitive)."
    )
    include_resolved: bool = Field(
        default=False, description="Also return RESOLVED findings and archived detections (default: open only)."
    )


class GetSecurityFindingsByEmailOutput(SkillOutput):
    email: str = Field(description="The email looked up (lower-cased).")
    accounts: int = Field(description="Number of SaaS accounts registered with exactly this email.")
    findings: list[PushFinding] = Field(
        description="Findings about the user's employee record or accounts, newest first (open only unless "
        "include_resolved)."
    )
    detections: list[PushDetection] = Field(
        description="Detections whose employee has this email, newest first (unarchived only unless include_resolved)."
    )
    complete: bool = Field(
        description="False when a list was too long to read in full (page cap reached): results may be missing."
    )


# Neither list can be filtered by employee server-side (reference D.6/D.7), so the whole tenant list is read.
_SCAN_PAGE = 100
_SCAN_MAX_PAGES = 50


def _newest_first(record: PushFinding | PushDetection) -> int:
    return -(record.creation_timestamp or 0)


@skill(
    integration=INTEGRATION_ID,
    id="push_security.get_security_findings_by_email",
    name="Get Security Findings by Email",
    purpose=(
        "Shows what Push knows about one user: open findings on their accounts (no MFA, reused, weak, leaked or "
        "stolen password, shared account) and their detections (phishing pages, AiTM kits, stolen credentials)."
    ),
    permissions=("API key: Read only",),
    writes=False,
)
async def get_security_findings_by_email(
    ctx: SkillContext, params: GetSecurityFindingsByEmailInput
) -> GetSecurityFindingsByEmailOutput:
    client = PushClient(ctx)
    email = params.email.strip().lower()
    accounts = await _accounts_with_email(client, email)
    employee_ids = {a.employee_id for a in accounts if a.employee_id}
    account_ids = {a.id for a in accounts}

    async def scan(path: str, wanted: bool = True) -> tuple[list[dict[str, Any]], str | None]:
        if not wanted:
            return [], None
        return await client.list(path, {"limit": _SCAN_PAGE}, next_token=None, max_pages=_SCAN_MAX_PAGES)

    # Findings are tied to the user only through their accounts' ids: without accounts there is nothing to match.
    (finding_items, findings_left), (detection_items, detections_left) = await asyncio.gather(
        scan("/findings", wanted=bool(accounts)), scan("/detections")
    )

    findings = [
        f
        for f in map(PushFinding.model_validate, finding_items)
        if (f.employee_id in employee_ids or f.account_id in account_ids)
        and (params.include_resolved or (f.state or "").upper() != "RESOLVED")
    ]
    detections = [
        PushDetection.model_validate(d)
        for d in detection_items
        if _employee_email(d) == email and (params.include_resolved or d.get("archived") is not True)
    ]
    return GetSecurityFindingsByEmailOutput(
        email=email,
        accounts=len(accounts),
        findings=sorted(findings, key=_newest_first),
        detections=sorted(detections, key=_newest_first),
        complete=findings_left is None and detections_left is None,
    )


def _employee_email(detection: dict[str, Any]) -> str:
    employee = detection.get("employee")
    value = employee.get("email") if isinstance(employee, dict) else None
    return value.strip().lower() if isinstance(value, str) else ""
