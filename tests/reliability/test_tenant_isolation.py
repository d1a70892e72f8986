"""No tenant sees or changes another (issue 14 item 6), proved over every route the application declares.

The walk iterates the app's router tables, so a route added later is covered without touching this file, and a
route the walker cannot classify (an unknown path parameter, a write without a probe body) fails the test.
Organization A's restricted API key and A's console analyst go at organization B's alert, case, playbook,
connection, organization, user and API key: every answer is 403 or 404, no answer contains B's data, and
nothing of B's rows changes. A viewer of A cannot write through any console route, even to A's own objects.
An all-organizations key and a console admin still reach B's objects.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient
from sqlalchemy import or_, select

from tests.reliability.record import record
from tests.support.harness import Harness
from vigil.ai.schemas import Analysis, Disposition, Severity, Verdict
from vigil.alerts.models import Alert
from vigil.cases import service as cases_service
from vigil.console.deps import require_admin, require_writer
from vigil.console.security import CSRF_HEADER
from vigil.db.base import Base
from vigil.db.session import Database
from vigil.evidence.knowledge import Category
from vigil.playbooks import service as playbooks_service
from vigil.playbooks.schemas import AnalyzeStep, PlaybookDefinition
from vigil.users import service as users_service
from vigil.users.schemas import Role

PASSWORD = "correct horse battery staple"
#: Path parameters that carry a tenant-owned object, and the organization-code parameters (SPEC §2: 403).
OBJECT_PARAMS = {"alert_ref", "case_ref", "playbook_uuid", "connection_uuid", "fact_uuid"}
CODE_PARAMS = {"organization_code", "code"}
#: Routes with no principal to scope: documentation, probes and static files.
PUBLIC = {"/openapi.json", "/docs", "/redoc", "/favicon.ico", "/healthz", "/readyz", "/metrics", "/static"}
#: The signed-in user's own session and password: every role may use them, and they name no tenant.
SELF_SERVICE = {"/", "/login", "/logout", "/account", "/account/password", "/account/choose-password"}
#: Authenticated by the chat provider's signature, not by a key or session (tests/slack covers them).
SIGNED_BY_CHAT_PROVIDER = {"/serviceapi/webhooks/chat/v1/events", "/serviceapi/webhooks/chat/v1/interactions"}


@dataclass
class Tenant:
    """One organization's objects, as the path parameters of the walk name them."""

    code: str
    name: str
    alert_id: str = ""
    alert_uuid: str = ""
    case_id: str = ""
    case_uuid: str = ""
    playbook_uuid: str = ""
    connection_uuid: str = ""
    user_uuid: str = ""
    key_uuid: str = ""
    fact_uuid: str = ""
    marker: str = ""  # in the alert content, the playbook's alert type and the connection's name
    owned: dict[str, set[uuid.UUID]] = field(default_factory=dict)  # owner column → this tenant's ids

    def params(self, name: str) -> list[str]:
        """The values a path parameter takes for this tenant; an unknown parameter cannot be classified."""
        values = {
            "alert_ref": [self.alert_id, self.alert_uuid],
            "case_ref": [self.case_id, self.case_uuid],
            "playbook_uuid": [self.playbook_uuid],
            "connection_uuid": [self.connection_uuid],
            "organization_code": [self.code],
            "code": [self.code],
            "integration_id": ["push_security"],
            "slug": ["cloudflare"],
            "key_uuid": [self.key_uuid],
            "user_id": [self.user_uuid],
            "fact_uuid": [self.fact_uuid],
        }.get(name)
        assert values is not None, f"the tenant walk cannot classify the path parameter {{{name}}}; add it here"
        return values

    def secrets(self) -> set[str]:
        """Strings that only this tenant's data contains."""
        texts = {
            self.code,
            self.name,
            self.marker,
            self.alert_uuid,
            self.case_uuid,
            self.playbook_uuid,
            self.connection_uuid,
            self.fact_uuid,
        }
        return {text for text in texts if text}


def _bodies(code: str) -> dict[tuple[str, str], dict[str, Any]]:
    """A valid body for every write route, so the scoping (not input validation) is what answers."""
    alert = Harness.alert_body(org=code)
    return {
        ("PUT", "/serviceapi/organizations/{organization_code}/ai-model"): {"ai_model": "builtin"},
        ("POST", "/serviceapi/alerts"): alert,
        ("POST", "/serviceapi/alerts/batch"): {"alerts": [alert]},
        ("PATCH", "/serviceapi/alerts/{alert_ref}"): {"alert_type": "Taken over"},
        ("POST", "/serviceapi/alerts/{alert_ref}/retry"): {},
        ("PATCH", "/serviceapi/cases/{case_ref}"): {"status": "contained"},
        ("POST", "/serviceapi/cases/{case_ref}/comments"): {"body": "taken over"},
        ("PUT", "/serviceapi/playbooks/{playbook_uuid}"): {
            "definition": {"steps": [{"kind": "analyze", "name": "Verdict"}]},
            "note": "taken over",
        },
        ("PUT", "/serviceapi/playbooks/{playbook_uuid}/alert-types"): {"alert_types": ["Taken over"]},
        ("POST", "/serviceapi/connections"): {
            "organization_code": code,
            "integration_id": "push_security",
            "name": "taken over",
            "fields": {"api_key": "k"},
        },
        ("PATCH", "/serviceapi/connections/{connection_uuid}"): {"name": "taken over"},
        ("DELETE", "/serviceapi/connections/{connection_uuid}"): {},
        ("POST", "/serviceapi/connections/{connection_uuid}/test"): {},
        ("POST", "/serviceapi/connections/{connection_uuid}/webhook-token"): {},
        ("POST", "/serviceapi/organizations/{organization_code}/facts"): {
            "kind": "authorised_scanner",
            "value": "192.0.2.1",
            "reason": "taken over",
            "owner": "taken@vigil.test",
            "expires_at": int(time.time()) + 86400,
        },
        ("PATCH", "/serviceapi/organizations/{organization_code}/facts/{fact_uuid}"): {"reason": "taken over"},
        ("DELETE", "/serviceapi/organizations/{organization_code}/facts/{fact_uuid}"): {},
        ("POST", "/facts/{code}"): {
            "kind": "authorised_scanner",
            "value": "192.0.2.1",
            "reason": "taken over",
            "owner": "taken@vigil.test",
            "expires": "2099-01-01",
        },
        ("POST", "/facts/{code}/{fact_uuid}/revoke"): {},
        ("POST", "/alerts/{alert_ref}/retry"): {},
        ("POST", "/alerts/{alert_ref}/type"): {"alert_type": "Taken over"},
        ("POST", "/cases/{case_ref}/change"): {"field": "status", "value": "closed"},
        ("POST", "/cases/{case_ref}/comments"): {"body": "taken over"},
        ("POST", "/investigators/{playbook_uuid}/edit"): {"op": "save", "note": "taken over"},
        ("POST", "/investigators/{playbook_uuid}/alert-types"): {"op": "add", "alert_type": "Taken over"},
        ("POST", "/integrations/{integration_id}/connections"): {
            "organization_code": code,
            "name": "taken over",
            "api_key": "k",
        },
        ("POST", "/integrations/{integration_id}/connections/{connection_uuid}/edit"): {"name": "taken over"},
        ("POST", "/integrations/{integration_id}/connections/{connection_uuid}/delete"): {},
        ("POST", "/integrations/{integration_id}/connections/{connection_uuid}/test"): {},
        ("POST", "/integrations/{integration_id}/connections/{connection_uuid}/webhook-token"): {},
        ("POST", "/organizations"): {"organization_code": "TAKEN", "name": "taken over"},
        ("POST", "/organizations/{code}"): {"name": "taken over"},
        ("POST", "/organizations/{code}/checkpoint-timeout"): {"checkpoint_timeout_seconds": "600"},
        ("POST", "/organizations/{code}/ai-model"): {"ai_model": "builtin"},
        ("POST", "/providers"): {"alert_provider": "takenover", "name": "taken over"},
        ("POST", "/providers/{slug}"): {"name": "taken over"},
        ("POST", "/providers/{slug}/enabled"): {"enabled": "false"},
        ("POST", "/providers/{slug}/delete"): {},
        ("POST", "/api-keys"): {"name": "taken over", "organizations": code},
        ("POST", "/api-keys/{key_uuid}/revoke"): {},
        ("POST", "/settings"): {"checkpoint_timeout_seconds": "600"},
        ("POST", "/users"): {"email": "taken@vigil.test", "role": "admin"},
        ("POST", "/users/{user_id}"): {"role": "admin", "organizations": code},
        ("POST", "/users/{user_id}/disable"): {},
        ("POST", "/users/{user_id}/enable"): {},
        ("POST", "/users/{user_id}/reset-password"): {},
    }


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    params: tuple[str, ...]
    admin_only: bool
    writer_only: bool

    @property
    def is_api(self) -> bool:
        return self.path.startswith("/serviceapi/")

    @property
    def exempt(self) -> bool:
        return self.path in PUBLIC | SELF_SERVICE | SIGNED_BY_CHAT_PROVIDER

    @property
    def names_a_tenant(self) -> bool:
        return bool(set(self.params) & (OBJECT_PARAMS | CODE_PARAMS))

    def urls(self, tenant: Tenant) -> Iterator[str]:
        """The route's path with every combination of the tenant's parameter values."""
        filled = [self.path]
        for name in self.params:
            filled = [url.replace("{" + name + "}", value) for url in filled for value in tenant.params(name)]
        yield from filled


def routes(harness: Harness) -> list[Route]:
    """Every (method, path) of the application, from its router tables."""
    found = []
    for context in iter_route_contexts(harness.app.routes):
        path = str(context.path)
        methods = sorted((context.methods or {"GET"}) - {"HEAD"})
        original = context.original_route
        guards = _guards(original.dependant) if isinstance(original, APIRoute) else set()
        params = tuple(re.findall(r"{(\w+)(?::\w+)?}", path))
        for method in methods:
            found.append(Route(method, path, params, require_admin in guards, require_writer in guards))
    return found


def _guards(dependant: Dependant) -> set[object]:
    calls: set[object] = {dependant.call}
    for child in dependant.dependencies:
        calls |= _guards(child)
    return calls


def snapshot(db: Database, tenant: Tenant) -> dict[str, list[str]]:
    """Every row of every table that belongs to the tenant, by an owner column, as text."""
    rows: dict[str, list[str]] = {}
    with db.read() as session:
        for table in Base.metadata.sorted_tables:
            conditions = [table.c[name].in_(ids) for name, ids in tenant.owned.items() if name in table.c and ids]
            if conditions:
                found = session.execute(select(table).where(or_(*conditions))).all()
                rows[table.name] = sorted(repr(tuple(row)) for row in found)
    return rows


def _setup_tenant(harness: Harness, admin_key: str, code: str, name: str) -> Tenant:
    harness.add_org(code, name)
    key = harness.add_key(code, name=f"{code} key")
    tenant = Tenant(code=code, name=name, key_uuid=str(key.key_uuid), marker=f"marker-{uuid.uuid4().hex[:12]}")
    body = harness.alert_body(org=code, alert_content=f'{{"note": "{tenant.marker}"}}')
    created = harness.post_alert(key.api_key, body)
    assert created.status_code == 201, created.text
    tenant.alert_id, tenant.alert_uuid = created.json()["alert_id"], created.json()["alert_uuid"]
    connection = harness.client.post(
        "/serviceapi/connections",
        json={
            "organization_code": code,
            "integration_id": "push_security",
            "name": f"conn {tenant.marker}",
            "fields": {"api_key": "k"},
        },
        headers={"Authorization": f"Bearer {admin_key}"},
    )
    assert connection.status_code == 201, connection.text
    tenant.connection_uuid = connection.json()["connection_uuid"]
    fact = harness.client.post(
        f"/serviceapi/organizations/{code}/facts",
        json={
            "kind": "vpn_egress",
            "value": "198.51.100.0/24",
            "reason": f"VPN {tenant.marker}",
            "owner": "net@vigil.test",
            "expires_at": int(time.time()) + 86400,
        },
        headers={"Authorization": f"Bearer {admin_key}"},
    )
    assert fact.status_code == 201, fact.text
    tenant.fact_uuid = fact.json()["fact_uuid"]
    analysis = Analysis(
        verdict=Verdict.SUSPICIOUS,
        severity=Severity.MEDIUM,
        disposition=Disposition.TRUE_POSITIVE,
        confidence=0.7,
        summary=f"Analysis of {tenant.marker}",
        key_findings=["finding"],
        recommended_actions=["act"],
        category=Category.EDGE_WAF_CHANGE,
    )
    with harness.db.write() as session:
        alert = session.scalar(select(Alert).where(Alert.alert_id == tenant.alert_id))
        assert alert is not None
        ref = playbooks_service.find_or_create(
            session,
            organization_uuid=alert.organization_uuid,
            organization_code=code,
            alert_provider="cloudflare",
            alert_type=tenant.marker,
            definition=PlaybookDefinition(steps=[AnalyzeStep(name="Verdict")]),
            actor="test",
        )
        assert ref is not None
        case = cases_service.open_case_for_alert(
            session, alert, attempt=1, playbook_uuid=ref.playbook_uuid, playbook_version=1, analysis=analysis
        )
        user = users_service.create_user(
            session,
            email=f"analyst@{code.lower()}.test",
            password=PASSWORD,
            role=Role.ANALYST,
            organization_codes=[code],
        )
        tenant.case_id, tenant.case_uuid = case.case_id, str(case.case_uuid)
        tenant.playbook_uuid, tenant.user_uuid = str(ref.playbook_uuid), str(user.user_uuid)
        tenant.owned = {
            "organization_uuid": {alert.organization_uuid},
            "alert_uuid": {alert.alert_uuid},
            "case_uuid": {case.case_uuid},
            "playbook_uuid": {ref.playbook_uuid},
            "connection_uuid": {uuid.UUID(tenant.connection_uuid)},
            "user_uuid": {user.user_uuid},
            "key_uuid": {key.key_uuid},
            "fact_uuid": {uuid.UUID(tenant.fact_uuid)},
        }
    return tenant


class Caller:
    """An API key or a signed-in console user, speaking to the in-process app."""

    def __init__(self, harness: Harness, *, api_key: str | None = None, email: str | None = None) -> None:
        self.client = TestClient(harness.app, raise_server_exceptions=False)
        self.api_key = api_key
        self.csrf = ""
        if email is not None:
            token = _csrf(self.client.get("/login").text)
            signed_in = self.client.post(
                "/login", data={"email": email, "password": PASSWORD, "csrf_token": token}, follow_redirects=False
            )
            assert signed_in.status_code == 303, signed_in.text
            self.csrf = _csrf(self.client.get("/account").text)

    def send(self, method: str, url: str, body: dict[str, Any] | None, *, api: bool) -> Any:
        if api:
            headers = {"Authorization": f"Bearer {self.api_key}"}
            json_body = body if method != "GET" and method != "DELETE" else None
            return self.client.request(method, url, json=json_body, headers=headers, follow_redirects=False)
        return self.client.request(
            method,
            url,
            data=body if method != "GET" else None,
            headers={CSRF_HEADER: self.csrf} if method != "GET" else {},
            follow_redirects=False,
        )


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "page has no CSRF field"
    return match.group(1)


@dataclass
class Tally:
    requests: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, ok: bool, what: str) -> None:
        self.requests += 1
        if not ok:
            self.failures.append(what)


@dataclass
class World:
    harness: Harness
    acme: Tenant
    beta: Tenant
    routes: list[Route]
    admin_key: str
    acme_key: str


def _world(harness: Harness) -> World:
    admin_key = harness.add_key(name="all organizations").api_key
    acme = _setup_tenant(harness, admin_key, "ACME", "Acme Secretname Holdings")
    beta = _setup_tenant(harness, admin_key, "BETA", "Beta Secretname Industries")
    with harness.db.write() as session:
        users_service.create_user(session, email="admin@vigil.test", password=PASSWORD, role=Role.ADMIN)
        users_service.create_user(
            session, email="viewer@acme.test", password=PASSWORD, role=Role.VIEWER, organization_codes=["ACME"]
        )
    acme_key = harness.add_key("ACME", name="acme walker").api_key
    return World(harness, acme, beta, routes(harness), admin_key, acme_key)


def walk_other_tenant(world: World) -> tuple[Tally, int]:
    """Org A's key (API routes) and A's analyst (console routes) against B: 403/404, no B data, B unchanged."""
    tally = Tally()
    api = Caller(world.harness, api_key=world.acme_key)
    console = Caller(world.harness, email="analyst@acme.test")
    bodies = _bodies(world.beta.code)
    before = snapshot(world.harness.db, world.beta)
    walked = 0
    for route in world.routes:
        if route.exempt:
            continue
        walked += 1
        body = bodies.get((route.method, route.path))
        assert route.method == "GET" or body is not None, f"no probe body for {route.method} {route.path}; add one"
        caller = api if route.is_api else console
        for url in route.urls(world.beta):
            response = caller.send(route.method, url, body, api=route.is_api)
            sent = url + repr(body)
            leaked = sorted(s for s in world.beta.secrets() if s in response.text and s not in sent)
            where = f"{route.method} {url} → {response.status_code}"
            tally.check(not leaked, f"{where} shows B's data {leaked}")
            if route.names_a_tenant or route.admin_only:
                tally.check(response.status_code in (403, 404), f"{where}: expected 403 or 404")
            else:
                tally.check(response.status_code < 500, f"{where}: server error")
            if route.method == "GET" and not route.names_a_tenant:
                code = world.beta.code
                filtered = caller.send(
                    "GET", f"{url}?organization_code={code}&organization={code}", None, api=route.is_api
                )
                leaked = sorted(s for s in world.beta.secrets() - {code} if s in filtered.text)
                tally.check(not leaked, f"GET {url}?organization=BETA shows B's data {leaked}")
            if route.method != "GET":
                tally.check(snapshot(world.harness.db, world.beta) == before, f"{where} changed B's rows")
    return tally, walked


def walk_viewer(world: World) -> tuple[Tally, int]:
    """A viewer of A posts to every console write route with A's own objects: 403 each, A's rows unchanged."""
    tally = Tally()
    viewer = Caller(world.harness, email="viewer@acme.test")
    bodies = _bodies(world.acme.code)
    before = snapshot(world.harness.db, world.acme)
    walked = 0
    for route in world.routes:
        if route.is_api or route.exempt or route.method == "GET":
            continue
        walked += 1
        for url in route.urls(world.acme):
            response = viewer.send(route.method, url, bodies[(route.method, route.path)], api=False)
            tally.check(response.status_code == 403, f"viewer {route.method} {url} → {response.status_code}")
            tally.check(snapshot(world.harness.db, world.acme) == before, f"viewer {route.method} {url} changed A")
    return tally, walked


def walk_all_organizations(world: World) -> tuple[Tally, int]:
    """The all-organizations key and a console admin still open every one of B's objects."""
    tally = Tally()
    api = Caller(world.harness, api_key=world.admin_key)
    admin = Caller(world.harness, email="admin@vigil.test")
    walked = 0
    for route in world.routes:
        if route.exempt or route.method != "GET" or not set(route.params) & OBJECT_PARAMS:
            continue
        walked += 1
        caller = api if route.is_api else admin
        for url in route.urls(world.beta):
            response = caller.send("GET", url, None, api=route.is_api)
            reached = response.status_code < 500 and response.status_code not in (401, 403, 404)
            tally.check(reached, f"all-organizations GET {url} → {response.status_code}")
    return tally, walked


def test_no_tenant_reaches_another_through_any_route(harness: Harness, backend: str) -> None:
    world = _world(harness)
    api_routes = sum(1 for r in world.routes if r.is_api and not r.exempt)
    console_routes = sum(1 for r in world.routes if not r.is_api and not r.exempt)
    assert api_routes >= 20 and console_routes >= 50, "the walk found too few routes to be the whole app"

    other, walked = walk_other_tenant(world)
    record(
        "Org A's API key and console analyst against org B's objects on every route",
        other.requests,
        "checks",
        not other.failures,
        f"{walked} routes walked ({api_routes} API, {console_routes} console); {len(other.failures)} of "
        f"{other.requests} checks failed (status not 403/404, B's data in the body, or B's rows changed)",
        backend=backend,
    )
    viewer, viewer_walked = walk_viewer(world)
    record(
        "A console viewer posts to every console write route",
        viewer.requests,
        "checks",
        not viewer.failures,
        f"{viewer_walked} write routes; {len(viewer.failures)} of {viewer.requests} checks failed (not 403 or a row "
        "changed)",
        backend=backend,
    )
    everything, everything_walked = walk_all_organizations(world)
    record(
        "The all-organizations key and a console admin open org B's objects",
        everything.requests,
        "requests",
        not everything.failures,
        f"{everything_walked} object routes; {len(everything.failures)} of {everything.requests} refused",
        backend=backend,
    )
    assert not other.failures, "\n".join(other.failures)
    assert not viewer.failures, "\n".join(viewer.failures)
    assert not everything.failures, "\n".join(everything.failures)
