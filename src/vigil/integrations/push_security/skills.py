"""Push Security skills: list SaaS accounts seen by the browser agent, and find the accounts of one email."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from vigil.integrations.framework import SkillContext, SkillInput, SkillOutput, optional, skill
from vigil.integrations.push_security.client import PushClient
from vigil.integrations.push_security.models import PushAccount

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
    id="List Accounts",
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
    id="Find Account by Email",
    purpose="Finds every SaaS account registered with one email address.",
    permissions=("API key: Read only",),
    writes=False,
)
async def find_account_by_email(ctx: SkillContext, params: FindAccountByEmailInput) -> FindAccountByEmailOutput:
    wanted = params.email.strip().lower()
    items, _ = await PushClient(ctx).list(
        "/accounts", {"email": wanted, "limit": _LOOKUP_PAGE}, next_token=None, max_pages=_LOOKUP_MAX_PAGES
    )
    # Push's email filter is partial; only exact matches are the same person.
    accounts = [a for a in map(PushAccount.model_validate, items) if (a.email or "").lower() == wanted]
    return FindAccountByEmailOutput(found=bool(accounts), accounts=accounts)
