"""Cases in the console: list with filters, detail with analysis/evidence/timeline, analyst changes, roles, tenancy."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.support.console import DESKTOP, PHONE, ConsoleStack, screenshot, sign_in
from vigil.users.schemas import Role

ANALYST = "ana@acme.example"
VIEWER = "vic@acme.example"
OTHER_ANALYST = "bob@beta.example"


def sign_in_alert(stack: ConsoleStack, key: str, n: int = 1) -> dict[str, Any]:
    """An identity alert the built-in analyst investigates offline (related-alerts lookup + analysis)."""
    content = {
        "userPrincipalName": f"user{n}@acme.example",
        "ipAddress": f"203.0.113.{n}",
        "result": "success",
        "riskEventTypes": ["impossibleTravel"],
    }
    return stack.post_alert(
        key,
        {
            "organization_code": "ACME",
            "alert_provider": "okta",
            "alert_type": "Impossible travel sign-in",
            "alert_content": json.dumps(content),
        },
    )


def wait_for_case(stack: ConsoleStack, key: str, alert_id: str, timeout: float = 60) -> str:
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


def setup_tenants(stack: ConsoleStack) -> str:
    stack.add_org("ACME", "Acme Corp")
    stack.add_org("BETA", "Beta Ltd")
    stack.add_user(ANALYST, Role.ANALYST, "ACME")
    stack.add_user(VIEWER, Role.VIEWER, "ACME")
    stack.add_user(OTHER_ANALYST, Role.ANALYST, "BETA")
    return stack.add_key("ACME").api_key


def csrf_token(page: Page) -> str:
    value = page.locator("input[name=csrf_token]").first.get_attribute("value")
    assert value
    return value


def timeline(page: Page) -> Any:
    return page.locator(".case-timeline")


def test_analyst_works_a_case_from_list_to_close(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    alert = sign_in_alert(stack, key)
    case_id = wait_for_case(stack, key, alert["alert_id"])
    sign_in(page, stack.url, ANALYST)

    page.goto("/cases")
    row = page.locator(f"tr[data-case-id='{case_id}']")
    expect(row).to_contain_text("Impossible travel sign-in")
    expect(row).to_contain_text("ACME")
    expect(row).to_contain_text("New")
    expect(row).to_contain_text("Unassigned")
    expect(row.get_by_role("link", name=alert["alert_id"], exact=True)).to_have_attribute(
        "href", f"/alerts/{alert['alert_id']}"
    )
    screenshot(page, "cases-list")

    row.get_by_role("link", name=case_id, exact=True).click()
    expect(page).to_have_url(re.compile(f"/cases/{case_id}$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("Impossible travel sign-in")
    expect(page.locator(".case-summary")).not_to_be_empty()
    expect(page.get_by_role("heading", name="Findings")).to_be_visible()
    expect(page.get_by_role("heading", name="Evidence behind the verdict")).to_be_visible()
    cited = page.locator("table.citations tbody tr").first
    expect(cited).to_contain_text("S1")
    expect(cited).to_contain_text("riskEventTypes[0]")
    expect(cited).to_contain_text("impossibleTravel")
    expect(cited).to_contain_text("+2.0")
    api_case = httpx.get(
        f"{stack.url}/serviceapi/cases/{case_id}", headers={"Authorization": f"Bearer {key}"}, timeout=10
    ).json()
    assert api_case["citations"][0] == {
        "rule": "S1",
        "source": "alert",
        "skill_id": None,
        "locator": "riskEventTypes[0]",
        "quote": "impossibleTravel",
        "finding": "Sign-in risk: impossible travel",
        "points": 2.0,
    }
    assert "user1@acme.example" in api_case["summary"] and "203.0.113.1" in api_case["summary"]
    evidence = page.locator(".evidence-step")
    expect(evidence.first).to_contain_text("Organization facts")  # the organization's context, read before analysis
    related = evidence.filter(has_text="Look up related alerts").first
    expect(evidence.last).to_contain_text("analyze")
    related.locator("summary").first.click()
    expect(related.locator(".related-alerts, pre").first).to_be_visible()  # related alerts read as a table
    expect(timeline(page)).to_contain_text("Vigil AI")
    expect(page.get_by_role("link", name="Investigator", exact=True)).to_have_attribute(
        "href", re.compile(r"^/investigators/")
    )
    screenshot(page, "case-detail")

    page.get_by_label("Status").select_option("in_progress")
    page.locator("form:has(#set-status)").get_by_role("button", name="Update status").click()
    expect(page.get_by_role("status").first).to_have_text("Status updated.")
    expect(timeline(page)).to_contain_text(f"{ANALYST}")
    expect(timeline(page)).to_contain_text("Status: new → in progress")

    page.get_by_role("button", name="Assign to me").click()
    expect(page.locator(".case-facts")).to_contain_text(ANALYST)
    expect(timeline(page)).to_contain_text(f"Assignee: unassigned → {ANALYST}")

    lifecycle = page.locator("form.lifecycle-form")
    expect(lifecycle.get_by_label("Final disposition")).to_be_hidden()  # until Closed is chosen

    page.get_by_label("Disposition", exact=True).select_option("false_positive")
    page.locator("form:has(#set-disposition)").get_by_role("button", name="Set").click()
    expect(timeline(page)).to_contain_text("Disposition: pending → false positive")

    page.get_by_label("Add a comment").fill("Called the user: travelling with a VPN.\nClosing as benign.")
    page.get_by_role("button", name="Add comment").click()
    expect(page.locator(".comment")).to_contain_text("Called the user: travelling with a VPN.")
    expect(page.locator(".comment")).to_contain_text(ANALYST)
    expect(timeline(page)).to_contain_text("Comment: Called the user")

    page.get_by_label("Status").select_option("closed")
    expect(lifecycle.get_by_label("Final disposition")).to_have_value("false_positive")
    page.get_by_label("Closing note").fill("Confirmed with the user.")
    page.get_by_role("button", name="Close case").click()
    expect(page.get_by_role("status").first).to_have_text("Case closed.")
    expect(page.locator(".case-facts")).to_contain_text("Closed")
    expect(timeline(page)).to_contain_text("Status: in progress → closed")
    expect(page.locator(".comment").last).to_contain_text("Confirmed with the user.")
    expect(page.get_by_role("button", name="Reopen case")).to_be_visible()
    screenshot(page, "case-detail-closed")

    # The API sees the same history, with the console user as actor.
    case = httpx.get(f"{stack.url}/serviceapi/cases/{case_id}", headers={"Authorization": f"Bearer {key}"}).json()
    assert case["status"] == "closed" and case["disposition"] == "false_positive" and case["closed_at"]
    assert [(e["field"], e["to_value"]) for e in case["timeline"] if e["actor"] == ANALYST and e["field"]] == [
        ("status", "in_progress"),
        ("assignee", ANALYST),
        ("disposition", "false_positive"),
        ("status", "closed"),
    ]

    page.get_by_role("button", name="Reopen case").click()
    expect(page.get_by_role("status").first).to_have_text("Case reopened.")
    expect(timeline(page)).to_contain_text("Status: closed → in progress")

    page.goto("/cases?assignee=me&status=in_progress")
    expect(page.locator(f"tr[data-case-id='{case_id}']")).to_be_visible()
    page.goto("/cases?status=closed")
    expect(page.locator(".empty")).to_contain_text("No cases match")


def test_double_submit_and_stale_form_change_the_case_once(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    case_id = wait_for_case(stack, key, sign_in_alert(stack, key)["alert_id"])
    sign_in(page, stack.url, ANALYST)
    page.goto(f"/cases/{case_id}")
    token = csrf_token(page)
    form = {"csrf_token": token, "field": "status", "value": "contained", "expected": "new"}
    for _ in range(2):
        assert page.request.post(f"/cases/{case_id}/change", form=form, max_redirects=0).status == 303
    stale = page.request.post(f"/cases/{case_id}/change", form={**form, "value": "pending"}, max_redirects=0)
    assert stale.status == 409
    assert "in the meantime" in stale.text()
    page.reload()
    expect(timeline(page).get_by_text("Status: new → contained")).to_have_count(1)
    comment = {"csrf_token": token, "body": "Only once", "submission_id": "abc123"}
    for _ in range(2):
        page.request.post(f"/cases/{case_id}/comments", form=comment, max_redirects=0)
    page.reload()
    expect(page.locator(".comment")).to_have_count(1)
    # Closing without a disposition is refused with the reason, and nothing changes.
    page.goto(f"/cases/{case_id}")
    refused = page.request.post(f"/cases/{case_id}/change", form={**form, "value": "closed", "expected": "contained"})
    assert refused.status == 422 and "Set a disposition" in refused.text()


def test_viewer_reads_without_controls_and_cannot_post(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    case_id = wait_for_case(stack, key, sign_in_alert(stack, key)["alert_id"])
    sign_in(page, stack.url, VIEWER)
    page.goto(f"/cases/{case_id}")
    expect(page.get_by_role("heading", name="AI analysis")).to_be_visible()
    expect(page.get_by_role("heading", name="Manage")).to_have_count(0)
    expect(page.locator("form[action*='/change'], form[action*='/close'], form[action*='/comments']")).to_have_count(0)
    token = csrf_token(page)
    for path, form in (
        ("change", {"field": "status", "value": "closed"}),
        ("comments", {"body": "hi"}),
        ("change", {"field": "status", "value": "closed", "disposition": "false_positive"}),
    ):
        response = page.request.post(f"/cases/{case_id}/{path}", form={"csrf_token": token, **form})
        assert response.status == 403, path
    page.reload()
    expect(page.locator(".case-facts")).to_contain_text("New")
    expect(page.locator(".comment")).to_have_count(0)


def test_analyst_of_another_org_never_sees_the_case(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    case_id = wait_for_case(stack, key, sign_in_alert(stack, key)["alert_id"])
    sign_in(page, stack.url, OTHER_ANALYST)
    page.goto("/cases")
    expect(page.locator(".empty")).to_contain_text("No cases yet")
    expect(page.get_by_text(case_id)).to_have_count(0)
    page.goto("/cases?organization=ACME")
    expect(page.locator("tbody tr")).to_have_count(0)
    response = page.goto(f"/cases/{case_id}")
    assert response is not None and response.status == 403
    expect(page.locator("body")).not_to_contain_text("Impossible travel")
    token = csrf_token(page)
    posted = page.request.post(
        f"/cases/{case_id}/change", form={"csrf_token": token, "field": "status", "value": "closed"}
    )
    assert posted.status == 403


def test_case_pages_fit_a_phone(browser: Browser, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    case_id = wait_for_case(stack, key, sign_in_alert(stack, key)["alert_id"])
    context = browser.new_context(viewport=PHONE, base_url=stack.url)
    phone = context.new_page()
    try:
        sign_in(phone, stack.url, ANALYST)
        phone.goto("/cases")
        expect(phone.locator(f"tr[data-case-id='{case_id}']")).to_be_visible()
        screenshot(phone, "cases-list-phone")
        phone.goto(f"/cases/{case_id}")
        expect(phone.get_by_role("button", name="Update status")).to_be_visible()
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"page scrolls sideways ({width}px)"
        button = phone.get_by_role("button", name="Update status").bounding_box()
        assert button is not None and button["x"] + button["width"] <= PHONE["width"]
        screenshot(phone, "case-detail-phone")
    finally:
        context.close()
    assert DESKTOP["width"] > PHONE["width"]
