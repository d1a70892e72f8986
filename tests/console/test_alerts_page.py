"""The Alerts page: the seed's ten columns (among the triage queue's), live status without reload, filters, search,
keyset paging, tenancy. Severity order, new alerts and saved filters: test_triage_queue.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import vendor_urls
from tests.support.console import DESKTOP, PASSWORD, PHONE, ConsoleStack, screenshot, sign_in
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.slack.fake import SlackFake
from vigil.users.schemas import Role

#: The seed's ten columns in its order (SPEC §7), with the triage queue's severity, verdict, confidence and
#: assignee (from the alert's case) between them.
COLUMNS = [
    "ID",
    "SEVERITY",
    "ORG",
    "PROVIDER",
    "ALERT NAME",
    "STATUS",
    "VERDICT",
    "CONFIDENCE",
    "CREATION TIME",
    "INVESTIGATOR",
    "CASE ID",
    "ASSIGNEE",
    "COMPLETION TIME",
    "Content",
]
SEED_COLUMNS = [c for c in COLUMNS if c not in {"SEVERITY", "VERDICT", "CONFIDENCE", "ASSIGNEE"}]
LABELS = {0: "Created", 5: "Submitted", 10: "Inprogress", 15: "Completed", 20: "Failed"}
#: The builtin analyst investigates this type to completion offline (no vendor connection needed).
SIGN_IN_TYPE = "Impossible travel sign-in"
#: Each playbook step sleeps this long, so a fresh alert is visibly pending when the page opens.
STEP_DELAY_SECONDS = 1.5


def sign_in_content(n: int) -> str:
    return json.dumps({"userPrincipalName": f"user{n}@acme.example", "ipAddress": f"203.0.113.{n}", "result": "ok"})


def console_stack(
    db_url: str,
    tmp_path: Path,
    mde: MdeFake,
    cloudflare: CloudflareFake,
    slack: SlackFake,
    *,
    engine: bool = True,
    **overrides: Any,
) -> ConsoleStack:
    settings = engine_settings(
        db_url,
        tmp_path,
        vendor_urls=vendor_urls(mde=mde.url, cloudflare=cloudflare.url, slack=slack.api_url),
        **overrides,
    )
    return ConsoleStack(settings, engine=engine)


@pytest.fixture
def stack(
    db_url: str, tmp_path: Path, mde_server: MdeFake, cloudflare_server: CloudflareFake, slack_server: SlackFake
) -> Iterator[ConsoleStack]:
    """A live Vigil whose investigations take a few seconds, so the page sees them pending."""
    built = console_stack(
        db_url, tmp_path, mde_server, cloudflare_server, slack_server, engine_step_delay_seconds=STEP_DELAY_SECONDS
    )
    with built as running:
        yield running


@pytest.fixture
def quiet_stack(
    db_url: str, tmp_path: Path, mde_server: MdeFake, cloudflare_server: CloudflareFake, slack_server: SlackFake
) -> Iterator[ConsoleStack]:
    """No engine: alerts keep the status they are given, for filter and paging tests."""
    with console_stack(db_url, tmp_path, mde_server, cloudflare_server, slack_server, engine=False) as running:
        yield running


@pytest.fixture
def quiet_page(browser: Browser, quiet_stack: ConsoleStack) -> Iterator[Page]:
    context = browser.new_context(viewport=DESKTOP, base_url=quiet_stack.url, timezone_id="America/New_York")
    context.set_default_timeout(15_000)
    opened = context.new_page()
    yield opened
    context.close()


def post_batch(stack: ConsoleStack, api_key: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    response = httpx.post(
        f"{stack.url}/serviceapi/alerts/batch",
        json={"alerts": bodies},
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert all(item["status"] == 201 for item in results), results
    return [item["alert"] for item in results]


def api_alert(stack: ConsoleStack, api_key: str, alert_id: str) -> dict[str, Any]:
    response = httpx.get(
        f"{stack.url}/serviceapi/alerts/{alert_id}", headers={"Authorization": f"Bearer {api_key}"}, timeout=10
    )
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


def row(page: Page, alert_id: str) -> Locator:
    return page.locator(f'#alerts-table tbody tr[data-alert-id="{alert_id}"]')


def shown_ids(page: Page) -> list[str]:
    return page.locator("#alerts-table tbody tr[data-alert-id]").evaluate_all(
        "rows => rows.map(r => r.dataset.alertId)"
    )


def navigate(page: Page, target: Locator) -> None:
    """Click a link or submit button and wait for the page it opens (rows are read right after)."""
    with page.expect_navigation():
        target.click()


def local_time(page: Page, epoch: int) -> str:
    """The text the console's script shows for an epoch, computed by the same browser."""
    text: str = page.evaluate(
        """epoch => new Intl.DateTimeFormat(undefined, {year: "numeric", month: "2-digit", day: "2-digit",
            hour: "2-digit", minute: "2-digit", second: "2-digit"}).format(new Date(epoch * 1000))""",
        epoch,
    )
    return text


def column(name: str) -> int:
    return COLUMNS.index(name)


def untyped(org: str, provider: str, content: str) -> dict[str, Any]:
    return {"organization_code": org, "alert_provider": provider, "alert_content": content}


def test_row_shows_all_ten_columns_and_completes_without_reload(page: Page, stack: ConsoleStack) -> None:
    stack.add_org("ACME", "Acme Corp")
    key = stack.add_key("ACME").api_key
    content = sign_in_content(7)
    sign_in(page, stack.url)
    created = stack.post_alert(
        key,
        {
            "organization_code": "ACME",
            "alert_provider": "okta",
            "alert_type": SIGN_IN_TYPE,
            "alert_content": content,
        },
    )
    page.goto("/alerts")
    headers = page.locator("#alerts-table thead th")
    expect(headers).to_have_text(COLUMNS)
    line = row(page, created["alert_id"])
    expect(line).to_have_count(1)
    expect(line).to_have_class(re.compile(r"\bis-live\b"))
    expect(page.locator("#alerts-live")).to_have_attribute("data-live", "on")
    page.evaluate("window.__alertsPageMarker = 'same document'")

    status = line.locator("td").nth(column("STATUS"))
    expect(status).to_have_text("Completed", timeout=60_000)
    assert page.evaluate("window.__alertsPageMarker") == "same document", "the page was reloaded"
    expect(page.locator("#alerts-live")).to_have_attribute("data-live", "off")

    record = api_alert(stack, key, created["alert_id"])
    assert record["investigation_status"] == 15 and record["case_id"] and record["investigator"]
    cells = line.locator("td")
    expect(cells).to_have_count(len(COLUMNS))
    expected = [
        record["alert_id"],
        record["organization_code"],
        "Okta",  # the provider's display name
        record["alert_type"],
        LABELS[record["investigation_status"]],
        local_time(page, record["created_at"]),
        record["investigator"],
        record["case_id"],
        local_time(page, record["completed_at"]),
        content,
    ]
    for name, text in zip(SEED_COLUMNS, expected, strict=True):
        expect(cells.nth(column(name))).to_have_text(text, use_inner_text=True)
    expect(cells.nth(column("PROVIDER"))).to_have_attribute("title", record["alert_provider"])
    expect(cells.nth(column("STATUS")).locator(".badge")).to_have_class(re.compile(r"\bstatus-15\b"))
    expect(cells.nth(column("ID")).get_by_role("link")).to_have_attribute("href", f"/alerts/{record['alert_id']}")
    expect(cells.nth(column("CASE ID")).get_by_role("link")).to_have_attribute("href", f"/cases/{record['case_id']}")
    investigator_href = cells.nth(column("INVESTIGATOR")).get_by_role("link").get_attribute("href")
    assert investigator_href is not None and re.fullmatch(r"/investigators/[0-9a-f-]{36}", investigator_href)
    expect(cells.nth(column("CREATION TIME")).locator("time")).to_have_attribute(
        "data-epoch", str(record["created_at"])
    )
    expect(cells.nth(column("COMPLETION TIME")).locator("time")).to_have_attribute(
        "data-epoch", str(record["completed_at"])
    )
    # The case's severity, verdict and confidence, as the case API reports them.
    case = httpx.get(
        f"{stack.url}/serviceapi/cases/{record['case_id']}", headers={"Authorization": f"Bearer {key}"}, timeout=10
    ).json()
    expect(cells.nth(column("SEVERITY"))).to_have_text(case["severity"].capitalize())
    expect(cells.nth(column("VERDICT"))).to_contain_text(case["verdict"].capitalize())
    expect(cells.nth(column("CONFIDENCE"))).to_have_text(f"{case['ai_confidence'] * 100:.0f}%")

    screenshot(page, "alerts")
    # The content cell opens to the whole content, indented.
    content_cell = cells.nth(column("Content"))
    expect(content_cell.locator("pre")).not_to_be_visible()
    content_cell.locator("summary").click()
    expect(content_cell.locator("pre")).to_have_text(json.dumps(json.loads(content), indent=2))
    page.set_viewport_size(PHONE)
    page.reload()
    expect(row(page, created["alert_id"])).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the page is {overflow}px wider than a 390px phone"
    wrap = page.locator(".table-wrap")
    assert wrap.evaluate("el => el.scrollWidth > el.clientWidth"), "the table scrolls inside its wrapper"
    screenshot(page, "alerts-phone")


def test_filters_and_search_narrow_the_rows(quiet_page: Page, quiet_stack: ConsoleStack) -> None:
    stack, page = quiet_stack, quiet_page
    stack.add_org("ACME")
    stack.add_org("BETA")
    key = stack.add_key().api_key
    alerts = post_batch(
        stack,
        key,
        [
            untyped("ACME", "okta", '{"user": "alice@acme.example", "note": "needle-42"}'),
            untyped("ACME", "cloudflare", '{"zone": "acme.example"}'),
            untyped("BETA", "okta", '{"user": "bob@beta.example"}'),
            {**untyped("BETA", "cloudflare", "WAF rule disabled by admin"), "alert_type": "WAF rule disabled"},
        ],
    )
    ids = [a["alert_id"] for a in alerts]
    # The default order is the triage queue's: no alert has a case (severity) yet, so the oldest comes first.
    queue_order = ids
    sign_in(page, stack.url)
    page.goto("/alerts")
    assert shown_ids(page) == queue_order

    filters = page.get_by_role("search", name="Filter alerts")
    filters.get_by_label("Organization").select_option("BETA")
    navigate(page, filters.get_by_role("button", name="Apply"))
    expect(page).to_have_url(re.compile(r"/alerts\?org=BETA$"))
    assert shown_ids(page) == [ids[2], ids[3]]

    filters.get_by_label("Provider").select_option("okta")
    navigate(page, filters.get_by_role("button", name="Apply"))
    assert shown_ids(page) == [ids[2]]

    page.goto("/alerts?provider=cloudflare")
    assert shown_ids(page) == [ids[1], ids[3]]
    page.goto("/alerts?type=WAF+rule+disabled")
    assert shown_ids(page) == [ids[3]]
    expect(filters.get_by_label("Alert type")).to_have_value("WAF rule disabled")
    page.goto("/alerts?status=0")
    assert shown_ids(page) == queue_order
    page.goto("/alerts?status=15")
    assert shown_ids(page) == []
    expect(page.locator("#alert-rows")).to_contain_text("No alerts match these filters.")

    page.goto("/alerts")
    filters.get_by_label("Search content").fill("needle-42")
    navigate(page, filters.get_by_role("button", name="Apply"))
    expect(page).to_have_url(re.compile(r"q=needle-42"))
    assert shown_ids(page) == [ids[0]]
    navigate(page, page.get_by_role("link", name="Clear"))
    assert shown_ids(page) == queue_order

    # Time range: presets, and a custom range typed in the browser's zone (New York here), not UTC.
    filters.get_by_label("Time range").select_option("1h")
    navigate(page, filters.get_by_role("button", name="Apply"))
    expect(page).to_have_url(re.compile(r"/alerts\?range=1h$"))
    assert shown_ids(page) == queue_order
    created = datetime.fromtimestamp(alerts[0]["created_at"], tz=ZoneInfo("America/New_York")).replace(tzinfo=None)

    def custom_range(start: datetime, end: datetime) -> list[str]:
        filters.get_by_label("Time range").select_option("custom")
        filters.get_by_label("From", exact=True).fill(start.strftime("%Y-%m-%dT%H:%M:%S"))
        filters.get_by_label("To", exact=True).fill(end.strftime("%Y-%m-%dT%H:%M:%S"))
        navigate(page, filters.get_by_role("button", name="Apply"))
        expect(page).to_have_url(re.compile(r"range=custom.*tz=America%2FNew_York"))
        return shown_ids(page)

    assert custom_range(created - timedelta(minutes=5), created + timedelta(minutes=5)) == queue_order
    # The alerts' UTC wall-clock time, typed in New York, is 4-5 hours away from them: a server that read
    # the browser's datetime-local values as UTC would wrongly match here (and miss the window above).
    as_utc = datetime.fromtimestamp(alerts[0]["created_at"], tz=UTC).replace(tzinfo=None)
    assert custom_range(as_utc - timedelta(minutes=5), as_utc + timedelta(minutes=5)) == []
    expect(page.locator(".custom-zone")).to_contain_text("America/New_York")
    page.goto("/alerts?range=custom&after=2030-01-02T03:04&before=2020-01-01T00:00")
    expect(page.get_by_role("alert")).to_have_text("The time range ends before it starts.")


def test_older_and_newer_pages_keep_the_filters(quiet_page: Page, quiet_stack: ConsoleStack) -> None:
    stack, page = quiet_stack, quiet_page
    stack.add_org("ACME")
    stack.add_org("BETA")
    key = stack.add_key().api_key
    acme = [
        a["alert_id"] for a in post_batch(stack, key, [untyped("ACME", "okta", f'{{"n": {n}}}') for n in range(60)])
    ]
    post_batch(stack, key, [untyped("BETA", "okta", f'{{"n": {n}}}') for n in range(5)])
    expected = list(reversed(acme))
    sign_in(page, stack.url)
    page.goto("/alerts?org=ACME&limit=25&sort=-created")
    assert shown_ids(page) == expected[:25]
    expect(page.get_by_role("link", name="← Newer")).to_have_count(0)

    navigate(page, page.get_by_role("link", name="Older →"))
    expect(page).to_have_url(re.compile(r"org=ACME.*sort=-created.*limit=25.*cursor="))
    assert shown_ids(page) == expected[25:50]
    navigate(page, page.get_by_role("link", name="Older →"))
    assert shown_ids(page) == expected[50:]
    expect(page.get_by_role("link", name="Older →")).to_have_count(0)
    deep_url = page.url

    navigate(page, page.get_by_role("link", name="← Newer"))
    expect(page).to_have_url(re.compile(r"org=ACME.*sort=-created.*newer="))
    assert shown_ids(page) == expected[25:50]
    navigate(page, page.get_by_role("link", name="← Newer"))
    assert shown_ids(page) == expected[:25]
    expect(page.get_by_role("link", name="← Newer")).to_have_count(0)

    # The URL is the whole state: the deep page opens the same in a new tab.
    other = page.context.new_page()
    other.goto(deep_url)
    assert shown_ids(other) == expected[50:]
    other.close()
    page.goto("/alerts?sort=-created&cursor=not-a-cursor")
    expect(page.get_by_role("alert")).to_contain_text("cursor is not valid")


def test_analyst_sees_only_their_organizations(quiet_page: Page, quiet_stack: ConsoleStack) -> None:
    stack, page = quiet_stack, quiet_page
    stack.add_org("ACME")
    stack.add_org("BETA")
    stack.add_user("ann@acme.example", Role.ANALYST, "ACME")
    key = stack.add_key().api_key
    mine = post_batch(stack, key, [untyped("ACME", "okta", '{"secret": "acme"}')])[0]
    theirs = post_batch(stack, key, [untyped("BETA", "okta", '{"secret": "beta-only"}')])[0]
    sign_in(page, stack.url, "ann@acme.example", PASSWORD)
    page.goto("/alerts")
    assert shown_ids(page) == [mine["alert_id"]]
    organization = page.get_by_role("search", name="Filter alerts").get_by_label("Organization")
    assert organization.locator("option").all_inner_texts() == ["All organizations", "ACME · ACME"]
    page.goto("/alerts?q=beta-only")
    assert shown_ids(page) == []
    page.goto("/alerts?org=BETA")
    assert shown_ids(page) == []
    expect(page.get_by_role("alert")).to_have_text("You have no access to organization BETA.")

    response = page.goto(f"/alerts/{theirs['alert_id']}")
    assert response is not None and response.status == 404
    expect(page.locator("main")).not_to_contain_text("beta-only")
    response = page.goto(f"/alerts/{theirs['alert_uuid']}")
    assert response is not None and response.status == 404
    live = page.request.get(f"/alerts/live?a={theirs['alert_uuid']}:0.0.0")
    assert live.ok and theirs["alert_id"] not in live.text()
    assert page.goto(f"/alerts/{mine['alert_id']}") is not None
    expect(page.get_by_label("Alert content")).to_contain_text('"secret": "acme"')


def test_viewer_sees_no_actions_and_cannot_post_them(quiet_page: Page, quiet_stack: ConsoleStack) -> None:
    stack, page = quiet_stack, quiet_page
    stack.add_org("ACME")
    stack.add_user("val@acme.example", Role.VIEWER, "ACME")
    key = stack.add_key("ACME").api_key
    alert = post_batch(stack, key, [untyped("ACME", "okta", '{"user": "x"}')])[0]
    sign_in(page, stack.url, "val@acme.example", PASSWORD)
    page.goto(f"/alerts/{alert['alert_id']}")
    expect(page.get_by_role("heading", name="Set alert type")).to_be_visible()
    expect(page.locator("main form")).to_have_count(0)
    expect(page.locator("main button[type=submit]")).to_have_count(0)
    token = page.locator("body").get_attribute("hx-headers")
    assert token is not None
    csrf = json.loads(token)["X-CSRF-Token"]
    for action, form in (("type", {"alert_type": "Anything"}), ("retry", {})):
        answer = page.request.post(f"/alerts/{alert['alert_id']}/{action}", form={**form, "csrf_token": csrf})
        assert answer.status == 403, action
    assert api_alert(stack, key, alert["alert_id"])["alert_type"] is None
