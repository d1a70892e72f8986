"""Alert detail: content, entities, steps and timeline; set-type and retry actions end to end through the engine."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.console.test_alerts_page import SIGN_IN_TYPE, api_alert, console_stack, sign_in_content
from tests.fakes.fixtures import MDE_VALUES
from tests.support.console import PHONE, ConsoleStack, screenshot
from tests.support.playbooks import install_playbook
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.slack.fake import SlackFake
from vigil.playbooks.schemas import AnalyzeStep, OnError, PlaybookDefinition, SkillStep

DEFENDER_TYPE = "Ransomware behavior detected"


@pytest.fixture
def stack(
    db_url: str, tmp_path: Path, mde_server: MdeFake, cloudflare_server: CloudflareFake, slack_server: SlackFake
) -> Iterator[ConsoleStack]:
    built = console_stack(db_url, tmp_path, mde_server, cloudflare_server, slack_server, engine_step_delay_seconds=1.0)
    with built as running:
        yield running


def wait_for_status(stack: ConsoleStack, key: str, alert_id: str, statuses: set[int]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        record = api_alert(stack, key, alert_id)
        if record["investigation_status"] in statuses:
            return record
        time.sleep(0.2)
    raise AssertionError(f"{alert_id} never reached {statuses}")


def test_detail_shows_content_entities_steps_and_timeline(admin_page: Page, stack: ConsoleStack) -> None:
    page = admin_page
    stack.add_org("ACME")
    key = stack.add_key("ACME").api_key
    content = sign_in_content(9)
    created = stack.post_alert(
        key,
        {"organization_code": "ACME", "alert_provider": "okta", "alert_type": SIGN_IN_TYPE, "alert_content": content},
    )
    record = wait_for_status(stack, key, created["alert_id"], {15})
    page.goto("/alerts")
    page.get_by_role("link", name=created["alert_id"]).click()
    expect(page).to_have_url(re.compile(f"/alerts/{created['alert_id']}$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(created["alert_id"])
    expect(page.locator("#alert-status")).to_have_text("Completed")

    facts = page.locator("dl.alert-facts")
    for label, value in (
        ("Alert UUID", record["alert_uuid"]),
        ("Provider", "okta"),
        ("Alert type", SIGN_IN_TYPE),
        ("Retries", "0"),
        ("Investigator", record["investigator"]),
        ("Case", record["case_id"]),
        ("Created by", record["created_by"]),
    ):
        expect(facts.locator(f'dt:text-is("{label}") + dd')).to_have_text(value)
    expect(facts.locator('dt:text-is("Created") + dd time')).to_have_attribute("data-epoch", str(record["created_at"]))
    expect(page.get_by_role("link", name=f"Open case {record['case_id']}")).to_have_attribute(
        "href", f"/cases/{record['case_id']}"
    )
    expect(page.get_by_label("Alert content")).to_have_text(json.dumps(json.loads(content), indent=2))

    entities = page.locator("dl.entities")
    addresses = entities.locator('dt:text-is("IP addresses") + dd')
    expect(addresses.locator("code")).to_have_text("203.0.113.9")
    expect(addresses.locator(".badge")).to_have_text("subject")  # the sign-in's source address is what it is about
    expect(entities.locator("dd").filter(has_text="user9@acme.example").first).to_be_visible()

    attempt = page.locator("details.attempt").first
    expect(attempt).to_have_attribute("open", "")
    expect(attempt.locator("summary").first).to_contain_text("Completed")
    steps = attempt.locator("details.step")
    assert steps.count() >= 2
    names = steps.locator(".step-name").all_inner_texts()
    assert names[-1] == "AI analysis"
    related = steps.filter(has_text="Look up related alerts").first
    related.locator("summary").first.click()
    expect(related.locator(".step-output")).to_contain_text('"count"')
    expect(related.locator(".badge")).to_have_text("Ok")
    expect(related.locator(".step-duration")).to_have_text(re.compile(r"^(< 1 ms|\d+(\.\d)? m?s)$"))

    timeline = page.locator("ol.alert-timeline li")
    texts = timeline.all_inner_texts()
    assert any("Alert received" in t for t in texts)
    assert "Submitted → In progress" in texts[2] or any("Submitted → In progress" in t for t in texts)
    assert "Completed: case" in texts[-1] and "vigil:engine" in texts[-1]
    screenshot(page, "alert-detail")
    page.set_viewport_size(PHONE)
    page.reload()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"the detail page is {overflow}px wider than a 390px phone"
    screenshot(page, "alert-detail-phone")


def test_setting_a_type_submits_the_alert_and_it_completes(admin_page: Page, stack: ConsoleStack) -> None:
    page = admin_page
    stack.add_org("ACME")
    key = stack.add_key("ACME").api_key
    created = stack.post_alert(
        key, {"organization_code": "ACME", "alert_provider": "okta", "alert_content": sign_in_content(11)}
    )
    page.goto(f"/alerts/{created['alert_id']}")
    expect(page.locator("#alert-status")).to_have_text("Created")
    expect(page.locator("details.attempt")).to_have_count(0)
    expect(page.get_by_text("Not investigated: the alert has no type.")).to_be_visible()
    screenshot(page, "alert-detail-untyped")

    form = page.locator("section.set-type")
    form.get_by_label("Alert type").fill("   ")
    form.get_by_role("button", name="Set type and investigate").click()
    expect(form.get_by_role("alert")).to_have_text("Enter an alert type of 1 to 256 characters.")
    assert api_alert(stack, key, created["alert_id"])["investigation_status"] == 0

    form.get_by_label("Alert type").fill(SIGN_IN_TYPE)
    form.get_by_role("button", name="Set type and investigate").click()
    expect(page).to_have_url(re.compile(f"/alerts/{created['alert_id']}\\?notice=submitted$"))
    expect(page.get_by_role("status").filter(has_text="submitted for investigation")).to_be_visible()
    page.evaluate("window.__detailMarker = 'same document'")
    expect(page.locator("#alert-status")).to_have_text("Completed", timeout=60_000)
    assert page.evaluate("window.__detailMarker") == "same document", "the page was reloaded"
    expect(page.locator("section.set-type")).to_have_count(0)

    record = api_alert(stack, key, created["alert_id"])
    assert record["alert_type"] == SIGN_IN_TYPE and record["case_id"]
    changes = [(e["from_status"], e["to_status"], e["actor"]) for e in record["timeline"] if e["kind"] == "status"]
    assert changes[0] == (0, 5, "user:admin@vigil.test")
    assert [c[:2] for c in changes] == [(0, 5), (5, 10), (10, 15)]
    expect(page.locator("ol.alert-timeline")).to_contain_text(f"Alert type set to '{SIGN_IN_TYPE}'")
    expect(page.locator("ol.alert-timeline")).to_contain_text("user:admin@vigil.test")

    # A second type cannot be set (the form is gone; a forged post is refused with the reason).
    csrf = json.loads(page.locator("body").get_attribute("hx-headers") or "{}")["X-CSRF-Token"]
    again = page.request.post(f"/alerts/{created['alert_id']}/type", form={"alert_type": "Other", "csrf_token": csrf})
    assert again.status == 409 and "already has the type" in again.text()
    too_long = stack.post_alert(key, {"organization_code": "ACME", "alert_provider": "okta", "alert_content": "x"})
    answer = page.request.post(
        f"/alerts/{too_long['alert_id']}/type", form={"alert_type": "t" * 257, "csrf_token": csrf}
    )
    assert answer.status == 422 and "1 to 256 characters" in answer.text()
    assert api_alert(stack, key, too_long["alert_id"])["alert_type"] is None


def connect_defender(stack: ConsoleStack, key: str) -> None:
    response = httpx.post(
        f"{stack.url}/serviceapi/connections",
        json={
            "organization_code": "ACME",
            "integration_id": "microsoft_defender",
            "name": "defender-prod",
            "fields": MDE_VALUES,
        },
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert response.status_code == 201, response.text


def pin_defender_playbook(stack: ConsoleStack) -> None:
    """The alert type's playbook needs Defender's machine details and fails the attempt without them."""
    definition = PlaybookDefinition(
        steps=[
            SkillStep(
                name="Machine details",
                skill="List Machines",
                inputs={"machine_id": "{{ entities.device_ids[0] }}"},
                on_error=OnError.FAIL,
            ),
            AnalyzeStep(name="Verdict"),
        ]
    )
    install_playbook(stack.db, "ACME", "microsoft_defender", DEFENDER_TYPE, definition)


def test_retry_reruns_a_failed_investigation(admin_page: Page, stack: ConsoleStack, mde_fake: MdeFake) -> None:
    page = admin_page
    stack.add_org("ACME")
    key = stack.add_key("ACME").api_key
    connect_defender(stack, key)
    pin_defender_playbook(stack)
    # Defender refuses the app (missing API permission): a permanent failure, so no automatic re-run.
    mde_fake.fail_next(
        1, status=403, body={"error": {"code": "Forbidden", "message": "Missing role"}}, path_contains="/api/machines"
    )
    content = json.dumps({"title": "Ransomware behavior", "machineId": mde.MACHINES[0]["id"]})
    created = stack.post_alert(
        key,
        {
            "organization_code": "ACME",
            "alert_provider": "microsoft_defender",
            "alert_type": DEFENDER_TYPE,
            "alert_content": content,
        },
    )
    failed = wait_for_status(stack, key, created["alert_id"], {15, 20})
    assert failed["investigation_status"] == 20, failed
    page.goto(f"/alerts/{created['alert_id']}")
    expect(page.locator("#alert-status")).to_have_text("Failed")
    expect(page.locator(".failure-reason")).to_contain_text("Machine details")
    failed_step = page.locator("details.attempt").first.locator("details.step").first
    expect(failed_step.locator(".badge")).to_have_text("Error")
    failed_step.locator("summary").click()
    expect(failed_step.locator(".step-inputs")).to_contain_text(mde.MACHINES[0]["id"])
    expect(failed_step.locator(".step-message")).to_be_visible()
    screenshot(page, "alert-detail-failed")

    page.get_by_role("button", name="Retry investigation").click()
    expect(page).to_have_url(re.compile(r"\?notice=retried$"))
    expect(page.locator("#alert-status")).to_have_text("Completed", timeout=60_000)
    expect(page.get_by_role("button", name="Retry investigation")).to_have_count(0)
    attempts = page.locator("details.attempt")
    expect(attempts).to_have_count(2)
    expect(attempts.first.locator("summary").first).to_contain_text("Attempt 2 (retry 1)")
    expect(attempts.nth(1).locator("summary").first).to_contain_text("Failed")

    record = api_alert(stack, key, created["alert_id"])
    assert record["investigation_retry_count"] == 1 and record["case_id"] and record["failure_reason"] is None
    assert any(e["message"] == "Re-run requested" and e["to_status"] == 5 for e in record["timeline"])
    assert len(mde_fake.requests_to("/api/machines")) == 2
