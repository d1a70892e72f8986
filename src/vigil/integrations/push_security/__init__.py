"""Push Security: browser-observed SaaS accounts (REST API v1, x-api-key, 10 requests/s per key)."""

from __future__ import annotations

from vigil.integrations.framework import ConnectionTestResult, Integration, SkillContext
from vigil.integrations.push_security import skills as _skills  # noqa: F401  (registers the skills)
from vigil.integrations.push_security.client import PushClient
from vigil.integrations.push_security.fields import FIELDS


async def test_connection(ctx: SkillContext) -> ConnectionTestResult:
    """E12: list one account; 200 means the key is valid with read permission."""
    await PushClient(ctx).get("/accounts", {"limit": 1})
    return ConnectionTestResult(ok=True, status_code=200, detail="API key accepted; accounts are readable.")


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test

INTEGRATION = Integration(
    id="push_security",
    name="Push Security",
    description="Identity threat detection: SaaS accounts observed in employees' browsers.",
    fields=FIELDS,
    test=test_connection,
    position=4,
    alert_category="account_change",
)
