"""End to end through the durable engine: alerts → playbooks → cases, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select, update

from tests.engine.conftest import engine_settings
from tests.support.harness import Harness
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.investigations.models import InvestigationStep
from vigil.playbooks.models import Playbook

COMPLETED = InvestigationStatus.COMPLETED
TYPES = ("Impossible travel sign-in", "Malware detected on endpoint", "WAF rule disabled")


def sign_in(n: int) -> str:
    return json.dumps({"userPrincipalName": f"user{n}@acme.example", "ipAddress": f"203.0.113.{n}", "result": "ok"})


def all_done(alerts: list[dict[str, object]], count: int) -> bool:
    return len(alerts) == count and all(a["investigation_status"] in (15, 20) for a in alerts)


def test_alerts_of_three_types_for_two_orgs_complete_with_playbooks_and_cases(engine_harness: Harness) -> None:
    harness = engine_harness
    for code in ("ACME", "BETA"):
        harness.add_org(code)
    key = harness.add_key().api_key
    for n in range(20):
        org = "ACME" if n % 2 == 0 else "BETA"
        body = harness.alert_body(org=org, provider="okta", alert_type=TYPES[n % 3], alert_content=sign_in(n))
        assert harness.post_alert(key, body).status_code == 201
    alerts = harness.wait_for(key, lambda a: all_done(a, 20))
    assert {a["investigation_status"] for a in alerts} == {COMPLETED}
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    with harness.db.read() as session:
        names = sorted(session.scalars(select(Playbook.name)))
    assert names == sorted(f"{org} okta - {t} - AI Generated {today}" for org in ("ACME", "BETA") for t in TYPES)
    for org in ("ACME", "BETA"):
        numbers = sorted(int(a["case_id"].split("-")[1]) for a in alerts if a["organization_code"] == org)
        assert numbers == list(range(1, 11))
    for alert in alerts:
        assert (
            alert["investigator"] == f"{alert['organization_code']} okta - {alert['alert_type']} - AI Generated {today}"
        )
        assert alert["completed_at"] >= alert["created_at"]
        assert alert["failure_reason"] is None
        assert alert["investigation_retry_count"] == 0


def test_case_holds_verdict_evidence_and_timeline(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    harness.post_alert(
        key, harness.alert_body(provider="okta", alert_type="Suspicious sign-in", alert_content=sign_in(1))
    )
    second = harness.post_alert(
        key, harness.alert_body(provider="okta", alert_type="Suspicious sign-in", alert_content=sign_in(1))
    ).json()
    harness.wait_for(key, lambda a: all_done(a, 2))
    headers = {"Authorization": f"Bearer {key}"}
    alert = harness.client.get(f"/serviceapi/alerts/{second['alert_id']}", headers=headers).json()
    statuses = [e["to_status"] for e in alert["timeline"] if e["kind"] in ("created", "status")]
    assert statuses == [0, 5, 10, 15]
    case = harness.client.get(f"/serviceapi/cases/{alert['case_id']}", headers=headers).json()
    assert case["alert_id"] == second["alert_id"]
    assert case["status"] == "new"
    assert case["disposition"] == "pending"
    assert case["severity"] in {"informational", "low", "medium", "high", "critical"}
    assert 0 <= case["ai_confidence"] <= 1
    assert case["summary"]
    related = [e for e in case["evidence"] if e["skill_id"] == "vigil.related_alerts"]
    assert related and related[0]["status"] == "ok"
    assert related[0]["output"]["count"] == 1, "the first alert shares the user and IP"
    assert case["evidence"][-1]["kind"] == "analyze"
    assert case["timeline"][0]["kind"] == "opened"
    listed = harness.client.get("/serviceapi/cases", headers=headers).json()["cases"]
    assert {c["case_id"] for c in listed} == {"ACME-1", "ACME-2"}


def test_concurrent_first_alerts_of_a_new_type_create_one_playbook(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    body = harness.alert_body(provider="okta", alert_type="Brand new type", alert_content=sign_in(7))
    with ThreadPoolExecutor(10) as pool:
        statuses = list(pool.map(lambda _: harness.post_alert(key, body).status_code, range(10)))
    assert statuses == [201] * 10
    alerts = harness.wait_for(key, lambda a: all_done(a, 10))
    assert Counter(a["investigation_status"] for a in alerts) == {COMPLETED: 10}
    with harness.db.read() as session:
        assert session.scalar(select(func.count()).select_from(Playbook)) == 1
    assert len({a["investigator"] for a in alerts}) == 1


def test_alert_without_type_is_not_investigated(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    body = harness.alert_body()
    del body["alert_type"]
    harness.post_alert(key, body)
    harness.post_alert(key, harness.alert_body(alert_content=sign_in(3)))
    alerts = harness.wait_for(key, lambda a: any(x["investigation_status"] == COMPLETED for x in a))
    untyped = next(a for a in alerts if a["alert_type"] is None)
    assert untyped["investigation_status"] == 0


def test_alert_accepted_before_a_crash_is_investigated_after_restart(db_url: str, tmp_path: Path) -> None:
    """201 returned, process dies before the enqueue: the Created row is the durable record."""
    settings = engine_settings(db_url, tmp_path)
    with Harness(settings) as no_engine:
        no_engine.add_org("ACME")
        key = no_engine.add_key("ACME").api_key
        created = no_engine.post_alert(key, no_engine.alert_body(alert_content=sign_in(1))).json()
        lost_after_mark = no_engine.post_alert(key, no_engine.alert_body(alert_content=sign_in(2))).json()
        with no_engine.db.write() as session:  # crashed after marking Submitted, before enqueue
            session.execute(
                update(Alert).where(Alert.alert_id == lost_after_mark["alert_id"]).values(investigation_status=5)
            )
    assert created["investigation_status"] == 0
    with Harness(settings, engine=True) as restarted:
        alerts = restarted.wait_for(key, lambda a: all_done(a, 2))
    assert {a["investigation_status"] for a in alerts} == {COMPLETED}


def test_replayed_steps_do_not_duplicate_evidence(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    harness.post_alert(key, harness.alert_body(alert_content=sign_in(4)))
    harness.wait_for(key, lambda a: all_done(a, 1))
    with harness.db.read() as session:
        rows = session.execute(
            select(InvestigationStep.alert_uuid, InvestigationStep.attempt, InvestigationStep.position)
        ).all()
    assert len(rows) == len(set(rows)) > 0


def test_an_investigation_interrupted_by_a_graceful_stop_resumes_instead_of_failing(
    db_url: str, tmp_path: Path
) -> None:
    """Stopping the engine mid-investigation (SIGTERM, a deploy) is not the investigation's failure."""
    settings = engine_settings(db_url, tmp_path, engine_step_delay_seconds=0.5)
    with Harness(settings, engine=True) as first:
        first.add_org("ACME")
        key = first.add_key("ACME").api_key
        first.post_alert(key, first.alert_body(alert_content=sign_in(7)))
        first.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] == InvestigationStatus.IN_PROGRESS)
    with first.db.read() as session:  # the engine has stopped; the database is still there
        interrupted = session.execute(
            select(Alert.investigation_status, Alert.investigation_retry_count, Alert.failure_reason)
        ).one()
    assert tuple(interrupted) == (InvestigationStatus.IN_PROGRESS, 0, None)
    with Harness(settings, engine=True) as restarted:
        alerts = restarted.wait_for(key, lambda a: all_done(a, 1))
    assert alerts[0]["investigation_status"] == COMPLETED
    assert alerts[0]["investigation_retry_count"] == 0
    assert alerts[0]["failure_reason"] is None
