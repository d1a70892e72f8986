"""Alert and case pages read as a report (issue 16 item 2): human status names, attempts from 1, measured
durations, related alerts as a linked table, the verdict's evidence marked, and one case lifecycle control whose
rules the server enforces (both databases, real Chromium)."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
from playwright.sync_api import Page, ViewportSize, expect

from tests.console.test_cases_pages import ANALYST, setup_tenants, timeline, wait_for_case
from tests.support.console import DESKTOP, ConsoleStack, screenshot, sign_in

WIDE = ViewportSize(width=1920, height=1080)
#: Statuses the lifecycle offers from `new`: every open one but `new` itself, and closing.
FROM_NEW = ["in_progress", "pending", "waiting_for_customer", "contained", "closed"]


def travel_alert(stack: ConsoleStack, key: str, risk: str) -> dict[str, Any]:
    """Sign-ins by the same user from the same address: the second relates to the first through both."""
    content = {
        "userPrincipalName": "pat@acme.example",
        "ipAddress": "203.0.113.77",
        "result": "success",
        "riskEventTypes": [risk],
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


def duration_ms(text: str) -> float:
    """The page's duration text back in milliseconds ("412 ms", "4.2 s", "2 min 5 s")."""
    match = re.fullmatch(r"(\d+(?:\.\d)?) (ms|s)|(\d+) min (\d+) s", text)
    assert match, f"not a duration: {text!r}"
    if match.group(3):
        return (int(match.group(3)) * 60 + int(match.group(4))) * 1000.0
    return float(match.group(1)) * (1 if match.group(2) == "ms" else 1000)


def test_alert_page_reads_like_a_report(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    first = travel_alert(stack, key, "impossibleTravel")
    first_case = wait_for_case(stack, key, first["alert_id"])
    second = travel_alert(stack, key, "unfamiliarFeatures")
    wait_for_case(stack, key, second["alert_id"])
    sign_in(page, stack.url, ANALYST)

    page.goto(f"/alerts/{first['alert_id']}")
    expect(page.locator("#alert-status")).to_have_text("Completed")
    status = page.locator('dl.alert-facts dt:text-is("Status") + dd')
    expect(status).to_contain_text("investigated; the verdict is in its case")
    expect(status).not_to_contain_text("(15)")
    attempt = page.locator("details.attempt").first
    expect(attempt.locator("summary").first).to_contain_text("Attempt 1 (first run)")
    took = duration_ms(attempt.locator(".attempt-duration").inner_text())
    assert took > 0, "a real investigation takes measurable time"
    # The verdict cites the alert's risk event (rule S1): marked in the content and listed above it.
    expect(page.locator("pre.alert-content-pretty mark.cited")).to_have_text(["impossibleTravel"])
    expect(page.locator("#content .cited-evidence")).to_contain_text("riskEventTypes[0]")
    expect(page.get_by_label("Alert content")).to_contain_text('"riskEventTypes"')
    timeline_text = " ".join(page.locator("ol.alert-timeline li").all_inner_texts())
    assert "Submitted → In progress" in timeline_text and "Inprogress" not in timeline_text

    page.goto(f"/alerts/{second['alert_id']}")
    related_step = page.locator("details.step").filter(has_text="Look up related alerts").first
    related_step.locator("summary").first.click()
    row = related_step.locator(f"table.related tbody tr[data-alert-id='{first['alert_id']}']")
    expect(row).to_be_visible()
    expect(row.locator(".shared")).to_contain_text("pat@acme.example")
    expect(row.get_by_role("link", name=first_case)).to_have_attribute("href", f"/cases/{first_case}")
    expect(related_step.locator(".raw-output pre")).to_contain_text('"count"')  # raw JSON kept, folded
    screenshot(page, "alert-detail-report")
    page.set_viewport_size(WIDE)
    screenshot(page, "alert-detail-report-1920")
    page.set_viewport_size(ViewportSize(width=DESKTOP["width"], height=DESKTOP["height"]))
    row.get_by_role("link", name=first["alert_id"]).click()
    expect(page).to_have_url(re.compile(f"/alerts/{first['alert_id']}$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(first["alert_id"])


def test_case_lifecycle_is_one_control_the_server_enforces(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    alert = travel_alert(stack, key, "impossibleTravel")
    case_id = wait_for_case(stack, key, alert["alert_id"])
    sign_in(page, stack.url, ANALYST)
    page.goto(f"/cases/{case_id}")
    lifecycle = page.locator("form.lifecycle-form")
    status = lifecycle.get_by_label("Status")
    offered = status.locator("option:not([disabled])").evaluate_all("options => options.map(o => o.value)")
    assert offered == FROM_NEW, "only legal next statuses are offered (never new again)"
    closing = lifecycle.locator("fieldset.closing-fields")
    expect(closing).to_be_hidden()
    related = page.locator(".evidence-step").filter(has_text="Look up related alerts")
    expect(related.locator("table.related, .related-alerts p")).to_have_count(1)  # a table or "None", not JSON

    status.select_option("closed")
    expect(closing).to_be_visible()
    expect(lifecycle.get_by_label("Final disposition")).to_have_value("")
    expect(lifecycle.get_by_role("button", name="Close case")).to_be_visible()
    lifecycle.get_by_label("Closing note").fill("Travelling with a VPN.")
    lifecycle.get_by_role("button", name="Close case").click()
    refusal = page.locator("p.alert.error")
    expect(refusal).to_contain_text("Set a disposition (true positive, benign true positive or false positive)")
    expect(page.locator(".case-facts")).to_contain_text("New")
    # The refused form comes back as it was sent: still closing, note kept, disposition to choose.
    expect(closing).to_be_visible()
    expect(lifecycle.get_by_label("Closing note")).to_have_value("Travelling with a VPN.")
    screenshot(page, "case-detail-close-refused")

    lifecycle.get_by_label("Final disposition").select_option("benign_true_positive")
    lifecycle.get_by_role("button", name="Close case").click()
    expect(page.get_by_role("status").first).to_have_text("Case closed.")
    expect(page.locator(".case-facts")).to_contain_text("Benign true positive")
    expect(timeline(page)).to_contain_text("Status: new → closed")
    expect(page.locator(".comment").last).to_contain_text("Travelling with a VPN.")
    expect(lifecycle.get_by_label("Status")).to_have_count(0)  # closed: reopening is the only move
    expect(lifecycle.get_by_role("button", name="Reopen case")).to_be_visible()

    token = page.locator("input[name=csrf_token]").first.get_attribute("value") or ""
    illegal = page.request.post(
        f"/cases/{case_id}/change",
        form={"csrf_token": token, "field": "status", "value": "contained", "expected": "closed"},
        max_redirects=0,
    )
    assert illegal.status == 409 and "cannot become contained" in illegal.text()
    headers = {"Authorization": f"Bearer {key}"}
    api = httpx.patch(f"{stack.url}/serviceapi/cases/{case_id}", json={"status": "new"}, headers=headers, timeout=10)
    assert api.status_code == 409, api.text
    assert api.json()["error"]["code"] == "invalid_status_transition"
    assert api.json()["error"]["details"][0]["allowed"] == ["in_progress"]

    lifecycle.get_by_role("button", name="Reopen case").click()
    expect(page.get_by_role("status").first).to_have_text("Case reopened.")
    expect(timeline(page)).to_contain_text("Status: closed → in progress")
    offered = status.locator("option:not([disabled])").evaluate_all("options => options.map(o => o.value)")
    assert offered == ["pending", "waiting_for_customer", "contained", "closed"]
    back_to_new = page.request.post(
        f"/cases/{case_id}/change",
        form={"csrf_token": token, "field": "status", "value": "new", "expected": "in_progress"},
        max_redirects=0,
    )
    assert back_to_new.status == 409
    case = httpx.get(f"{stack.url}/serviceapi/cases/{case_id}", headers=headers, timeout=10).json()
    assert case["status"] == "in_progress" and case["closed_at"] is None
    assert [(e["field"], e["to_value"]) for e in case["timeline"] if e["actor"] == ANALYST and e["field"]] == [
        ("disposition", "benign_true_positive"),
        ("status", "closed"),
        ("status", "in_progress"),
    ]
    screenshot(page, "case-detail-report")
    page.set_viewport_size(WIDE)
    screenshot(page, "case-detail-report-1920")
