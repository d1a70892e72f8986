"""No secret leaks through the side door (issue 14 items 4 and 5, acceptance 3).

A hostile vendor echoes every credential it is sent (the Push key raw, URL-encoded and base64; Defender's client
secret and the bearer token it issued) in its error bodies and, later, inside the records it returns. Connections
are tested and real investigations run against it; then every stored text value (application and workflow
databases), every API response, every console page that shows the results and every log line is searched for any
form of those credentials. The skill steps' 401/403 failures must carry the vendor-specific cause and remedy, as
the connection test does.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, String, Text, create_engine, inspect, select

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import vendor_urls
from tests.integrations.echo_vendor import CLIENT_ID, CLIENT_SECRET, PUSH_KEY, TENANT_ID, EchoVendor
from tests.reliability.record import record
from tests.support.console import ADMIN_EMAIL, PASSWORD
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.alerts.constants import InvestigationStatus
from vigil.playbooks.schemas import AnalyzeStep, OnError, PlaybookDefinition, SkillStep
from vigil.users import service as users_service
from vigil.users.schemas import Role

PROVIDER = "microsoft_defender"
CONTINUE_TYPE = "Echo drill - continue"
FAIL_TYPE = "Echo drill - fail"
PUSH_CAUSE, PUSH_REMEDY = "Key incorrect or expired", "Create a new API key in the Push admin console"
MDE_CAUSE, MDE_REMEDY = "Insufficient API permissions", "Grant administrator consent."


@pytest.fixture(scope="module")
def echo_server() -> Iterator[EchoVendor]:
    fake = EchoVendor()
    with fake.serve():
        yield fake


def _playbooks(harness: Harness) -> None:
    machine = "{{ entities.device_ids[0] }}"
    both = PlaybookDefinition(
        steps=[
            SkillStep(name="Push accounts", skill="List Accounts", inputs={"max_pages": "1"}),
            SkillStep(name="Defender machine", skill="List Machines", inputs={"machine_id": machine}),
            AnalyzeStep(name="Verdict"),
        ]
    )
    fail = PlaybookDefinition(
        steps=[
            SkillStep(
                name="Defender machine", skill="List Machines", inputs={"machine_id": machine}, on_error=OnError.FAIL
            )
        ]
    )
    install_playbook(harness.db, "ACME", PROVIDER, CONTINUE_TYPE, both)
    install_playbook(harness.db, "ACME", PROVIDER, FAIL_TYPE, fail)


class Collector:
    """Every text Vigil shows, with where it came from, so a leak can be reported by place."""

    def __init__(self, harness: Harness, key: str) -> None:
        self.harness, self.auth = harness, {"Authorization": f"Bearer {key}"}
        self.texts: list[tuple[str, str]] = []

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.harness.client.request(method, path, headers=self.auth, **kwargs)
        assert response.status_code < 500, response.text
        self.texts.append((f"API {method} {path}", response.text))
        return response.json() if response.content else None

    def page(self, path: str) -> str:
        response = self.harness.client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        self.texts.append((f"page {path}", response.text))
        return response.text


def _sign_in(harness: Harness) -> None:
    with harness.db.write() as session:
        users_service.create_user(session, email=ADMIN_EMAIL, password=PASSWORD, role=Role.ADMIN)
    token = re.search(r'name="csrf_token" value="([^"]+)"', harness.client.get("/login").text)
    assert token is not None
    data = {"email": ADMIN_EMAIL, "password": PASSWORD, "csrf_token": token.group(1)}
    assert harness.client.post("/login", data=data, follow_redirects=False).status_code == 303


def _stored_texts(url: str) -> list[tuple[str, str]]:
    """Every text cell of every table of a database (all schemas on PostgreSQL), as (table.column, value)."""
    engine = create_engine(url)
    texts: list[tuple[str, str]] = []
    try:
        schemas = [s for s in inspect(engine).get_schema_names() if s not in ("information_schema", "pg_catalog")]
        for schema in schemas if engine.dialect.name == "postgresql" else [None]:
            metadata = MetaData(schema=schema)
            metadata.reflect(engine)
            with engine.connect() as connection:
                for table in metadata.sorted_tables:
                    columns = [c for c in table.columns if isinstance(c.type, String | Text)]
                    for row in connection.execute(select(*columns)) if columns else []:
                        texts.extend((f"{table.name}.{c.name}", str(v)) for c, v in zip(columns, row, strict=True) if v)
    finally:
        engine.dispose()
    return texts


def _wait_ended(collector: Collector, alert_id: str, timeout: float = 90.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alert: dict[str, Any] = collector.harness.client.get(
            f"/serviceapi/alerts/{alert_id}", headers=collector.auth
        ).json()
        if alert["investigation_status"] in (InvestigationStatus.COMPLETED, InvestigationStatus.FAILED):
            return alert
        time.sleep(0.2)
    raise AssertionError(f"alert {alert_id} did not end within {timeout} s")


def _post(collector: Collector, alert_type: str) -> str:
    content = '{"title": "Echo drill", "machineId": "0123456789abcdef0123456789abcdef01234567"}'
    body = collector.harness.alert_body(provider=PROVIDER, alert_type=alert_type, alert_content=content)
    response = collector.harness.post_alert(collector.auth["Authorization"].removeprefix("Bearer "), body)
    assert response.status_code == 201, response.text
    alert_id: str = response.json()["alert_id"]
    return alert_id


def test_echoed_credentials_appear_in_no_stored_field_response_page_or_log_line(
    db_url: str, backend: str, tmp_path: Path, echo_server: EchoVendor, caplog: pytest.LogCaptureFixture
) -> None:
    echo = echo_server
    echo.reset()
    caplog.set_level(logging.DEBUG)
    settings = engine_settings(
        db_url,
        tmp_path,
        vendor_urls=vendor_urls(mde=echo.url),
        max_auto_retries=0,
        skill_retry_attempts=1,
        executor_id=f"secrets-echo-{backend}",
    )
    with Harness(settings, engine=True) as harness:
        harness.add_org("ACME")
        collector = Collector(harness, harness.add_key("ACME").api_key)
        _playbooks(harness)
        push = collector.api(
            "POST",
            "/serviceapi/connections",
            json={
                "organization_code": "ACME",
                "integration_id": "push_security",
                "name": "push",
                "fields": {"domain": echo.url, "api_key": PUSH_KEY},
            },
        )
        mde = collector.api(
            "POST",
            "/serviceapi/connections",
            json={
                "organization_code": "ACME",
                "integration_id": "microsoft_defender",
                "name": "defender",
                "fields": {"tenant_id": TENANT_ID, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET},
            },
        )
        push_test = collector.api("POST", f"/serviceapi/connections/{push['connection_uuid']}/test")
        mde_test = collector.api("POST", f"/serviceapi/connections/{mde['connection_uuid']}/test")

        # Phase 1: the vendor refuses and echoes; phase 2: it accepts the key and echoes it inside its records.
        failing = [_post(collector, CONTINUE_TYPE), _post(collector, FAIL_TYPE)]
        ended = [_wait_ended(collector, alert_id) for alert_id in failing]
        echo.reject, echo.leak_in_data = False, True
        leaking = _post(collector, CONTINUE_TYPE)
        ended.append(_wait_ended(collector, leaking))

        _sign_in(harness)
        evidence: list[dict[str, Any]] = []
        for alert in ended:
            alert_id = alert["alert_id"]
            collector.api("GET", f"/serviceapi/alerts/{alert_id}")
            collector.page(f"/alerts/{alert_id}")
            if alert["case_id"]:
                evidence += collector.api("GET", f"/serviceapi/cases/{alert['case_id']}")["evidence"]
                collector.page(f"/cases/{alert['case_id']}")
        collector.api("GET", "/serviceapi/connections")
        for connection in (push, mde):
            collector.api("GET", f"/serviceapi/connections/{connection['connection_uuid']}")
            collector.page(f"/integrations/{connection['integration_id']}/connections/{connection['connection_uuid']}")
            collector.page(f"/integrations/{connection['integration_id']}")
        stored = _stored_texts(settings.resolved_database_url)
        if settings.workflow_database_url != settings.resolved_database_url:
            stored += _stored_texts(settings.workflow_database_url)

    logs = [(f"log {r.name}", f"{r.getMessage()} {r.exc_text or ''}") for r in caplog.records]
    places = [*stored, *collector.texts, *logs]
    forms = echo.echoed()
    leaks = sorted({where for where, text in places for form in forms if form in text})
    errors = {e["name"]: e.get("error") or "" for e in evidence if e["status"] == "error"}
    failed = next(a for a in ended if a["alert_id"] == failing[1])
    explained = (
        push_test["cause"] == PUSH_CAUSE
        and mde_test["cause"] == MDE_CAUSE
        and PUSH_CAUSE in errors.get("Push accounts", "")
        and PUSH_REMEDY in errors.get("Push accounts", "")
        and MDE_CAUSE in errors.get("Defender machine", "")
        and MDE_REMEDY in errors.get("Defender machine", "")
        and MDE_CAUSE in (failed["failure_reason"] or "")
        and MDE_REMEDY in (failed["failure_reason"] or "")
    )
    echoed_in_data = any("[redacted]" in str(e.get("output")) for e in evidence if e["name"] == "Push accounts")
    held = not leaks and explained and echoed_in_data and len(echo.issued) >= 1
    record(
        "vendor echoing credentials (key raw/URL-encoded/base64, client secret, issued bearer token) in errors and "
        "records: connection tests + 3 investigations",
        len(places),
        "stored values, responses, pages and log lines",
        held,
        f"{len(leaks)} of {len(places):,} places hold an echoed credential ({len(stored):,} stored values, "
        f"{len(collector.texts)} responses/pages, {len(logs):,} log lines; {len(forms)} forms searched); "
        f"401/403 step errors and the failure reason carry cause + remedy: {explained}",
        backend=backend,
    )
    assert not leaks, leaks
    assert explained, (push_test, mde_test, errors, failed["failure_reason"])
    assert echoed_in_data, evidence
