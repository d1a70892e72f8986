"""The issue's acceptance journey in one browser session: an operator sets up a tenant in the console,
an alert source posts over HTTP, the investigation shows up live, and the analyst follows it to the case;
integrations are connected and authenticated; a playbook is edited; another tenant stays invisible."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Browser, Locator, Page, expect

from tests.console.test_integrations_pages import _create_in_ui
from tests.fakes.fixtures import slack_values
from tests.support.console import DESKTOP, PASSWORD, ConsoleStack, screenshot, sign_in
from vigil.integrations.slack.fake import SlackFake
from vigil.users.schemas import Role

SIGN_IN = '{"userPrincipalName": "jane@acme.example", "ipAddress": "203.0.113.50", "result": "success"}'


def test_operator_journey_from_tenant_setup_to_case(
    admin_page: Page, browser: Browser, stack: ConsoleStack, slack_fake: SlackFake
) -> None:
    page = admin_page

    # An organization and an API key, created in the UI.
    page.goto("/organizations")
    page.get_by_label("Code").fill("ACME")
    page.get_by_label("Name").fill("Acme Corp")
    page.get_by_role("button", name="Create organization").click()
    expect(page.locator("#organizations tr[data-code='ACME']")).to_contain_text("Acme Corp")
    page.goto("/api-keys")
    page.get_by_role("link", name="Create API key").click()
    page.get_by_label("Name").fill("ACME SIEM")
    page.get_by_label("Only these organizations").check()
    page.locator("input[name='organizations'][value='ACME']").check()
    page.get_by_role("button", name="Create key").click()
    api_key = page.locator("#new-api-key").inner_text().strip()

    # Slack connected and authenticated in the UI (a failed Authenticate shows its cause and remedy first).
    values = slack_values(slack_fake)
    _create_in_ui(page, "Slack", "ACME", "acme-slack", {**values, "bot_token": "xoxb-not-the-right-token"})
    page.get_by_role("button", name="Authenticate acme-slack").click()
    result = page.locator(".test-box .test-result")
    expect(result).to_contain_text("Cause:")
    expect(result).to_contain_text("Remedy:")
    page.locator("main").get_by_role("link", name="Edit", exact=True).first.click()
    page.locator("#f-bot_token").fill(values["bot_token"])
    page.get_by_role("button", name="Save changes").click()
    page.get_by_role("button", name="Authenticate acme-slack").click()
    expect(page.locator(".test-box .test-result")).to_contain_text("Authenticated")
    page.goto("/integrations/slack/skills")
    checkpoint = page.locator("section, article, div.skill", has_text="Chat Checkpoint").first
    expect(checkpoint).to_contain_text("user_email")
    expect(checkpoint).to_contain_text("answer")

    # The alert source posts over HTTP with the key; the row appears and completes without a reload.
    body = {"organization_code": "ACME", "alert_provider": "okta", "alert_type": "Suspicious sign-in"}
    created = httpx.post(
        f"{stack.url}/serviceapi/alerts",
        json={**body, "alert_content": SIGN_IN},
        headers={"Cookie": f"Session={api_key}"},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    alert_id = created.json()["alert_id"]
    page.goto("/alerts")
    page.evaluate("window.__journey = 'no reload'")
    row = page.locator(f'#alerts-table tbody tr[data-alert-id="{alert_id}"]')
    cells = row.locator("td")
    headers = [text.strip() for text in page.locator("#alerts-table thead th").all_inner_texts()]

    def cell(header: str) -> Locator:
        return cells.nth(headers.index(header))

    expect(cell("ID")).to_have_text(alert_id)
    expect(cell("ORG")).to_have_text("ACME")
    expect(cell("PROVIDER")).to_have_text("Okta")  # the provider's display name (slug on hover)
    expect(cell("ALERT NAME")).to_have_text("Suspicious sign-in")
    expect(cell("STATUS")).to_have_text("Completed", timeout=60_000)
    assert page.evaluate("window.__journey") == "no reload"
    expect(cell("INVESTIGATOR")).to_contain_text("ACME okta - Suspicious sign-in - AI Generated")
    expect(cell("CASE ID")).to_have_text(re.compile(r"^ACME-\d+$"))
    screenshot(page, "journey-alerts")

    # Follow the case ID to the case.
    case_id = cell("CASE ID").inner_text().strip()
    cell("CASE ID").get_by_role("link").click()
    expect(page).to_have_url(re.compile(rf"/cases/{case_id}$"))
    expect(page.locator("main")).to_contain_text(case_id)
    expect(page.get_by_role("heading", level=1)).to_contain_text(alert_id)
    expect(page.locator("main")).to_contain_text("Look up related alerts")
    screenshot(page, "journey-case")

    # Edit the playbook that investigated it: a new version is saved.
    page.goto(f"/alerts/{alert_id}")
    page.get_by_role("link", name=re.compile(r"AI Generated")).first.click()
    page.get_by_role("link", name="Edit steps").click()
    page.get_by_label("What changed").fill("journey edit")
    page.get_by_role("button", name=re.compile(r"^Save as version")).click()
    expect(page.locator("main")).to_contain_text("v2")

    # An analyst of another organization never sees ACME's alert.
    stack.add_org("BETA")
    stack.add_user("beta-analyst@vigil.test", Role.ANALYST, "BETA")
    context = browser.new_context(viewport=DESKTOP, base_url=stack.url)
    other = context.new_page()
    sign_in(other, stack.url, "beta-analyst@vigil.test", PASSWORD)
    other.goto("/alerts")
    expect(other.locator("#alerts-table tbody tr[data-alert-id]")).to_have_count(0)
    assert alert_id not in other.content()
    for url in (f"/alerts/{alert_id}", f"/cases/{case_id}"):
        response = other.goto(url)
        assert response is not None and response.status in (403, 404), url
        assert SIGN_IN not in other.content() and "Suspicious sign-in" not in other.content()
    context.close()
