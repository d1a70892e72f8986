"""Microsoft Defender for Endpoint: OAuth client credentials, machines, alerts, hunting and response actions."""

from __future__ import annotations

from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import ConnectionTestResult, Integration, SkillContext
from vigil.integrations.microsoft_defender import skills as _skills  # noqa: F401  (registers the skills)
from vigil.integrations.microsoft_defender.client import API_URL, AUTH_URL, DefenderClient
from vigil.integrations.microsoft_defender.fields import FIELDS


async def test_connection(ctx: SkillContext) -> ConnectionTestResult:
    """E6 then E7: a token proves the app credentials, listing one machine proves the API permission."""
    client = DefenderClient(ctx)
    await client.token()
    try:
        body = await client.get_json("/api/machines", {"$top": "1"})
    except IntegrationError as error:
        if error.status_code == 404:  # documented: 404 when the tenant has no recently seen machines
            return ConnectionTestResult(ok=True, detail="Authenticated; no machines are onboarded yet.")
        raise
    value = body.get("value")
    seen = "at least one machine is visible" if isinstance(value, list) and value else "no machines are visible"
    return ConnectionTestResult(ok=True, status_code=200, detail=f"Authenticated; {seen}.")


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test

INTEGRATION = Integration(
    id="microsoft_defender",
    name="Microsoft Defender for Endpoint",
    description="Endpoint security: list machines, fetch alerts, run advanced hunting, live response and isolation.",
    fields=FIELDS,
    test=test_connection,
    base_urls=(AUTH_URL, API_URL),
    position=1,
    alert_category="endpoint_malware",
)
