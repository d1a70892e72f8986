"""Every console page, from the router table, filled with one tenant's objects; and a watch for CSP violations.

The CSP test and the XSS test both walk the console this way, so a page added to a router is visited by both
(an unknown path parameter fails the walk instead of being skipped).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi.routing import APIRoute
from playwright.sync_api import ConsoleMessage, Page
from sqlalchemy import select
from starlette.routing import BaseRoute

from tests.fakes.fixtures import CLOUDFLARE_TOKEN_VALUES
from tests.support.console import ConsoleStack
from vigil.auth.schemas import Principal
from vigil.cases import service as cases_service
from vigil.console.router import router as console_router
from vigil.integrations import service as integrations_service
from vigil.integrations.schemas import ConnectionCreate
from vigil.orgs import service as orgs_service
from vigil.playbooks.models import Playbook
from vigil.users.models import ConsoleUser
from vigil.users.schemas import Role

OPERATOR = Principal(actor_uuid=uuid.uuid4(), name="test", all_organizations=True, organization_uuids=frozenset())
#: Fragments polled by HTMX, not pages a person opens (they are still requested, inside the pages that poll them).
FRAGMENTS = {"/alerts/live", "/alerts/{alert_ref}/live"}

# Collects violations across navigations: registered before any page script runs, read back after each visit.
WATCH_SCRIPT = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__cspViolations.push(event.violatedDirective + " blocked " + (event.blockedURI || "inline") +
    " at " + event.sourceFile + ":" + event.lineNumber);
});
"""


@dataclass
class Tenant:
    """The objects a walk fills path parameters with."""

    api_key: str
    alert_id: str
    case_id: str
    connection_uuid: uuid.UUID
    user_uuid: uuid.UUID
    key_uuid: uuid.UUID
    playbook_uuid: uuid.UUID = field(default_factory=uuid.uuid4)


def populate(stack: ConsoleStack, text: str = "Acme", *, org: str = "ACME") -> Tenant:
    """An organization, provider, API key, user, connection, investigated alert with its case and a comment,
    every free-text field of which carries `text` (the organization code and provider slug cannot)."""
    with stack.db.write() as session:
        orgs_service.create_organization(session, org, f"{text} org")
        orgs_service.create_provider(session, "hostile_src", f"{text} provider")
    stack.add_user("analyst@vigil.test", Role.ANALYST, org)
    with stack.db.write() as session:
        user = session.scalar(select(ConsoleUser).where(ConsoleUser.email == "analyst@vigil.test"))
        assert user is not None
        user.name = f"{text} analyst"
        user_uuid = user.user_uuid
    key = stack.add_key(org, name=f"{text} key")
    payload = ConnectionCreate(
        organization_code=org,
        integration_id="cloudflare",
        name=f"{text} connection"[:120],
        description=f"{text} description",
        auth_method=CLOUDFLARE_TOKEN_VALUES.get("auth_method"),
        fields={k: v for k, v in CLOUDFLARE_TOKEN_VALUES.items() if k != "auth_method"},
    )
    with stack.db.write() as session:
        box = stack.app.state.secret_box
        connection_uuid = integrations_service.create_connection(session, OPERATOR, payload, box).connection_uuid
    content = {
        "userPrincipalName": "jane@acme.example",
        "ipAddress": "203.0.113.9",
        "result": "success",
        "riskEventTypes": ["impossibleTravel"],
        "note": text,
        "url": "javascript:window.__xss=1",
    }
    alert = stack.post_alert(
        key.api_key,
        {
            "organization_code": org,
            "alert_provider": "okta",
            "alert_type": f"Impossible travel sign-in {text}"[:256],
            "alert_content": json.dumps(content),
        },
    )
    case_id = _wait_for_case(stack, key.api_key, str(alert["alert_id"]))
    with stack.db.write() as session:
        cases_service.add_comment(session, OPERATOR, case_id, author="analyst@vigil.test", body=f"{text} comment")
        playbook_uuid = session.scalars(select(Playbook.playbook_uuid).where(Playbook.organization_code == org)).first()
        assert playbook_uuid is not None
    return Tenant(
        api_key=key.api_key,
        alert_id=str(alert["alert_id"]),
        case_id=case_id,
        connection_uuid=connection_uuid,
        user_uuid=user_uuid,
        key_uuid=key.key_uuid,
        playbook_uuid=playbook_uuid,
    )


def _wait_for_case(stack: ConsoleStack, key: str, alert_id: str, timeout: float = 90) -> str:
    deadline = time.monotonic() + timeout
    alert: dict[str, Any] = {}
    while time.monotonic() < deadline:
        alert = httpx.get(
            f"{stack.url}/serviceapi/alerts/{alert_id}", headers={"Authorization": f"Bearer {key}"}, timeout=10
        ).json()
        if alert["investigation_status"] == 15 and alert["case_id"]:
            return str(alert["case_id"])
        assert alert["investigation_status"] != 20, alert
        time.sleep(0.2)
    raise AssertionError(f"investigation did not complete: {alert}")


def console_paths(tenant: Tenant, org: str = "ACME") -> list[str]:
    """Every GET page of the console router with its path parameters filled in from `tenant`."""
    values = {
        "alert_ref": tenant.alert_id,
        "case_ref": tenant.case_id,
        "playbook_uuid": str(tenant.playbook_uuid),
        "integration_id": "cloudflare",
        "connection_uuid": str(tenant.connection_uuid),
        "user_id": str(tenant.user_uuid),
        "code": org,
        "slug": "hostile_src",
        "key_uuid": str(tenant.key_uuid),
    }
    return [path.format(**values) for path in _get_pages(console_router.routes)]  # new parameter: add it above


def _get_pages(routes: Sequence[BaseRoute], prefix: str = "") -> list[str]:
    """GET page paths of a router, through the routers it includes (FastAPI keeps those nested)."""
    paths: list[str] = []
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            paths += _get_pages(included.routes, prefix + route.include_context.prefix)  # type: ignore[attr-defined]
        elif isinstance(route, APIRoute) and "GET" in (route.methods or ()) and route.path not in FRAGMENTS:
            paths.append(prefix + route.path)
    return paths


class CspWatch:
    """Records CSP violations a page reports (its event) and what Chromium logs about them (its console)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.logged: list[str] = []
        page.add_init_script(WATCH_SCRIPT)
        page.on("console", self._on_console)

    def _on_console(self, message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.logged.append(f"{self.page.url}: {message.text}")

    def reported(self) -> list[str]:
        """The current document's violation events (call before navigating away)."""
        found: list[str] = self.page.evaluate("window.__cspViolations || []")
        return [f"{self.page.url}: {item}" for item in found]
