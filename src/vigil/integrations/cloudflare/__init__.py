"""Cloudflare: audit logs, Security Center insights, Access applications, zones and ruleset rules."""

from __future__ import annotations

from vigil.integrations.cloudflare import skills as _skills  # noqa: F401  (registers the skills)
from vigil.integrations.cloudflare.client import API_URL, INVALID_API_TOKEN, CloudflareClient
from vigil.integrations.cloudflare.fields import FIELDS, AuthMethod
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import ConnectionTestResult, Integration, SkillContext


async def _verify_token(client: CloudflareClient) -> str:
    """E10; a token owned by the account (not a user) only verifies on the account's endpoint."""
    try:
        body = await client.get("/user/tokens/verify")
    except IntegrationError as user_error:
        if user_error.code != INVALID_API_TOKEN.code:
            raise
        try:
            body = await client.get(f"/accounts/{client.account_id}/tokens/verify")
        except IntegrationError:
            raise user_error from None
    result = body.get("result")
    status = str(result.get("status") or "unknown") if isinstance(result, dict) else "unknown"
    if status != "active":
        raise INVALID_API_TOKEN.error(f"The API token is {status}.", 200)
    return status


async def test_connection(ctx: SkillContext) -> ConnectionTestResult:
    """API token: E10 verify, then E9 proves the account; global key: E9 (per_page=1). Zone checked when set."""
    client = CloudflareClient(ctx)
    notes = []
    if client.auth_method is AuthMethod.API_TOKEN:
        notes.append(f"API token {await _verify_token(client)}")
    else:
        notes.append("Global API Key accepted")
    await client.get(f"/accounts/{client.account_id}/audit_logs", {"per_page": 1})
    notes.append("account audit logs readable")
    if client.zone_id:
        zone = (await client.get(f"/zones/{client.zone_id}")).get("result")
        name = zone.get("name") if isinstance(zone, dict) else None
        notes.append(f"zone {name or client.zone_id} reachable")
    return ConnectionTestResult(ok=True, status_code=200, detail="; ".join(notes) + ".")


test_connection.__test__ = False  # type: ignore[attr-defined]  # not a pytest test

INTEGRATION = Integration(
    id="cloudflare",
    name="Cloudflare",
    description="Edge security: audit logs, Security Center insights, Access apps, zones and WAF rules.",
    fields=FIELDS,
    test=test_connection,
    auth_method_field="auth_method",
    base_urls=(API_URL,),
    position=2,
    alert_category="edge_waf_change",
)
