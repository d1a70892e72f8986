"""The dashboard in Chromium on both databases: seeded alerts, cases and timelines with known times give known
figures (counts per day, MTTA, MTTR, p50/p95, automation rate, top lists), the charts draw one bar per day at
1366x768 without sideways scroll, and an analyst of one organization sees none of another's numbers."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from playwright.sync_api import Page, ViewportSize

from tests.engine.conftest import engine_settings
from tests.support.console import ConsoleStack, screenshot, screenshots_at_both_sizes, sign_in
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.cases.models import Case, CaseEvent
from vigil.db.base import epoch_now
from vigil.investigations.models import InvestigationAttempt
from vigil.orgs.models import Organization
from vigil.users.schemas import Role

DAY = 86_400
ANALYST = "ana@acme.example"


@dataclass
class Seed:
    """One alert: `days_ago` at 12:00 UTC; with a case when `severity` is set; its case events as
    (seconds after the alert, actor, kind)."""

    org: str
    days_ago: int
    alert_type: str
    severity: str | None = None
    verdict: str = "malicious"
    investigated_after: int = 0
    events: list[tuple[int, str, str]] = field(default_factory=list)
    subjects: dict[str, list[str]] = field(default_factory=dict)


SEEDS = [
    # Acknowledged by a person after 10 min, closed by them after 1 h.
    Seed(
        "ACME",
        1,
        "Impossible travel",
        "high",
        "malicious",
        60,
        [(600, "user:ana@acme.example", "assignee"), (3600, "user:ana@acme.example", "closed")],
        {"users": ["jo@acme.example"], "hosts": ["acme-laptop-7"]},
    ),
    # Acknowledged and closed by a SOAR's API key: 5 min, 30 min, automated.
    Seed(
        "ACME",
        1,
        "Impossible travel",
        "high",
        "suspicious",
        120,
        [(300, "api_key:soar", "status"), (1800, "api_key:soar", "closed")],
        {"hosts": ["acme-laptop-7"]},
    ),
    # Investigated, never touched by anyone.
    Seed("ACME", 3, "Malware detected", "low", "benign", 30, [], {"hosts": ["acme-laptop-7"], "ips": ["198.51.100.9"]}),
    # Not investigated yet.
    Seed("ACME", 3, "Malware detected"),
    # Only in the 30-day window: closed by a person after 2 h.
    Seed("ACME", 20, "Phishing reported", "critical", "malicious", 600, [(7200, "user:ana@acme.example", "closed")]),
    # Another tenant, on a day ACME also has alerts.
    Seed(
        "BETA",
        1,
        "Betasecret exfiltration",
        "critical",
        "malicious",
        45,
        [(90, "user:bob@beta.example", "closed")],
        {"hosts": ["betasecret-host"]},
    ),
]


@pytest.fixture
def stack(db_url: str, tmp_path: Path) -> Iterator[ConsoleStack]:
    """Vigil without its engine: every row is seeded, so no investigation may change the figures."""
    with ConsoleStack(engine_settings(db_url, tmp_path), engine=False) as running:
        running.add_org("ACME", "Acme Corp")
        running.add_org("BETA", "Beta Ltd")
        running.add_user(ANALYST, Role.ANALYST, "ACME")
        seed(running, SEEDS, epoch_now())
        yield running


def seed(stack: ConsoleStack, seeds: list[Seed], now: int) -> None:
    with stack.db.write() as session:
        orgs = {o.organization_code: o.organization_uuid for o in session.query(Organization)}
        for number, item in enumerate(seeds, start=1):
            created = (now // DAY - item.days_ago) * DAY + 12 * 3600
            alert = Alert(
                alert_uuid=uuid.uuid4(),
                alert_id=f"{item.org}-OKTA-{number}",
                organization_uuid=orgs[item.org],
                organization_code=item.org,
                alert_provider="okta",
                alert_type=item.alert_type,
                alert_content="{}",
                created_at=created,
                created_at_source=created,
                created_by=uuid.uuid4(),
                modified_at=created,
                investigation_status=InvestigationStatus.SUBMITTED,
                investigation_retry_count=0,
            )
            session.add(alert)
            if item.severity is None:
                continue
            done = created + item.investigated_after
            alert.investigation_status, alert.completed_at = InvestigationStatus.COMPLETED, done
            entities = {"subjects": item.subjects, **item.subjects}
            session.add(
                InvestigationAttempt(
                    alert_uuid=alert.alert_uuid,
                    attempt=0,
                    workflow_id=str(alert.alert_uuid),
                    entities=json.dumps(entities),
                    started_at=created,
                    finished_at=done,
                    outcome="completed",
                )
            )
            closed_at = next((created + at for at, _, kind in item.events if kind == "closed"), None)
            case = Case(
                case_uuid=uuid.uuid4(),
                case_id=f"{item.org}-{number}",
                organization_uuid=orgs[item.org],
                organization_code=item.org,
                alert_uuid=alert.alert_uuid,
                alert_id=alert.alert_id,
                attempt=0,
                title=item.alert_type,
                status="closed" if closed_at else "new",
                severity=item.severity,
                verdict=item.verdict,
                category="other",
                disposition="true_positive" if closed_at else "pending",
                ai_disposition="true_positive",
                ai_confidence=0.8,
                summary="seeded",
                created_at=done,
                modified_at=done,
                closed_at=closed_at,
            )
            session.add(case)
            session.add(CaseEvent(case_uuid=case.case_uuid, at=done, actor="vigil:ai", kind="opened", message="o"))
            for at, actor, kind in item.events:
                session.add(CaseEvent(case_uuid=case.case_uuid, at=created + at, actor=actor, kind=kind, message=kind))


def day(days_ago: int) -> str:
    return datetime.fromtimestamp((epoch_now() // DAY - days_ago) * DAY, tz=UTC).date().isoformat()


def kpi(page: Page, name: str) -> str:
    return page.locator(f"#kpi-{name}").inner_text()


def kpi_value(page: Page, name: str) -> str:
    return page.locator(f"#kpi-{name} .kpi-value").inner_text().strip()


def row(page: Page, table: str, days_ago: int) -> list[str]:
    cells = page.locator(f"#{table}-table tbody tr[data-day='{day(days_ago)}'] > *").all_inner_texts()
    return [cell.strip() for cell in cells]


def test_figures_charts_and_layout_for_an_analyst(page: Page, stack: ConsoleStack) -> None:
    sign_in(page, stack.url, ANALYST)
    page.goto("/")
    page.wait_for_url("**/dashboard")

    # Counts per day: severity columns are critical, high, medium, low, informational, not investigated.
    assert row(page, "alerts", 1) == [day(1), "0", "2", "0", "0", "0", "0", "2"]
    assert row(page, "alerts", 3) == [day(3), "0", "0", "0", "1", "0", "1", "2"]
    # Verdict columns: malicious, suspicious, benign, inconclusive.
    assert row(page, "cases", 1) == [day(1), "1", "1", "0", "0", "2"]
    assert row(page, "cases", 3) == [day(3), "0", "0", "1", "0", "1"]
    assert kpi_value(page, "alerts") == "4" and "3 cases opened" in kpi(page, "alerts")
    # MTTA (600 + 300) / 2; MTTR (3600 + 1800) / 2; investigation 30, 60, 120 s → p50 60 s, p95 120 s.
    assert kpi_value(page, "mtta") == "7 min 30 s" and "2 of 3 cases acknowledged" in kpi(page, "mtta")
    assert kpi_value(page, "mttr") == "45 min" and "2 of 3 cases closed" in kpi(page, "mttr")
    assert page.locator("#p50").inner_text() == "1 min" and page.locator("#p95").inner_text() == "2 min"
    assert kpi_value(page, "automation") == "50 %" and "1 of 2 closed cases" in kpi(page, "automation")
    types = page.locator("#top-types tbody tr").all_inner_texts()
    assert [t.split("\t") for t in types] == [["Impossible travel", "2"], ["Malware detected", "2"]]
    assert page.locator("#top-entities tbody tr").first.inner_text().split("\t") == ["acme-laptop-7", "Hosts", "3"]

    # One bar group per day, one rect per non-empty severity of a day, in real Chromium at 1366x768.
    assert page.locator("#alerts-chart g.bar").count() == 14
    assert page.locator("#alerts-chart rect.seg").count() == 3
    assert page.locator("#cases-chart rect.seg").count() == 3
    height = page.locator(f"#alerts-chart g.bar[data-day='{day(1)}'] rect.seg-high").bounding_box()
    assert height is not None and height["height"] > 0
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the dashboard scrolls sideways by {overflow}px at 1366px"

    body = page.content()
    assert "Betasecret" not in body and "betasecret-host" not in body and "BETA" not in body
    screenshots_at_both_sizes(page, "dashboard")  # and nothing sticks out sideways at 390 px
    page.set_viewport_size(ViewportSize(width=1920, height=1080))
    screenshot(page, "dashboard-1920")
    page.set_viewport_size(ViewportSize(width=1366, height=768))

    page.select_option("select[name=days]", "30")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url("**days=30**")
    assert page.locator("#alerts-chart g.bar").count() == 30
    assert kpi_value(page, "alerts") == "5"
    assert kpi_value(page, "mttr") == "1 h 10 min"  # (3600 + 1800 + 7200) / 3


def test_organization_selector_follows_tenancy(page: Page, stack: ConsoleStack) -> None:
    sign_in(page, stack.url, ANALYST)
    refused = page.goto("/dashboard?org=BETA")
    assert refused is not None and refused.status == 403
    assert "Betasecret" not in page.content() and page.locator(".kpi").count() == 0
    page.context.clear_cookies()

    sign_in(page, stack.url)  # the admin: every organization, and each one alone
    page.goto("/dashboard")
    assert row(page, "alerts", 1)[1:3] == ["1", "2"]  # BETA's critical beside ACME's two highs
    assert [o.strip() for o in page.locator("select[name=org] option").all_inner_texts()][1:] == [
        "Acme Corp (ACME)",
        "Beta Ltd (BETA)",
    ]
    page.goto("/dashboard?org=BETA")
    assert row(page, "alerts", 1) == [day(1), "1", "0", "0", "0", "0", "0", "1"]
    assert "Betasecret exfiltration" in page.locator("#top-types").inner_text()
    assert "acme-laptop-7" not in page.content()
