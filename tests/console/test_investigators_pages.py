"""Investigators in the console: playbook list, detail with versions, and the step editor (validated saves)."""

from __future__ import annotations

import re
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.console.test_cases_pages import ANALYST, OTHER_ANALYST, VIEWER, setup_tenants, sign_in_alert, wait_for_case
from tests.support.console import PHONE, ConsoleStack, screenshot, sign_in

PLAYBOOK_NAME = re.compile(r"ACME okta - Impossible travel sign-in - AI Generated \d{4}-\d{2}-\d{2}")


def api(stack: ConsoleStack, key: str, path: str) -> Any:
    response = httpx.get(f"{stack.url}{path}", headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert response.status_code == 200, response.text
    return response.json()


def first_case(stack: ConsoleStack, key: str) -> dict[str, Any]:
    case_id = wait_for_case(stack, key, sign_in_alert(stack, key, 1)["alert_id"])
    case: dict[str, Any] = api(stack, key, f"/serviceapi/cases/{case_id}")
    return case


def step(page: Page, number: int) -> Any:
    return page.get_by_role("listitem", name=f"Step {number}", exact=True)


def save(page: Page) -> None:
    page.get_by_role("button", name=re.compile(r"^Save as version")).click()


def test_analyst_edits_a_playbook_and_the_next_alert_runs_the_new_version(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    case = first_case(stack, key)
    playbook_uuid = case["playbook_uuid"]
    assert case["playbook_version"] == 1
    sign_in(page, stack.url, ANALYST)

    page.goto("/investigators")
    row = page.locator(f"tr[data-playbook='{playbook_uuid}']")
    expect(row).to_contain_text(PLAYBOOK_NAME)
    expect(row).to_contain_text("okta")
    expect(row.locator("td[data-label='Version']")).to_have_text("v1")
    expect(row.locator("td[data-label='Steps']")).to_have_text("2")
    screenshot(page, "investigators-list")

    row.get_by_role("link").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(PLAYBOOK_NAME)
    steps = page.locator(".pb-steps > li")
    expect(steps).to_have_count(2)
    expect(steps.nth(0)).to_contain_text("Look up related alerts")
    expect(steps.nth(0)).to_contain_text("Vigil (built in)")
    expect(steps.nth(1)).to_contain_text("Analyze")
    screenshot(page, "investigator-detail")

    page.get_by_role("link", name="Edit steps").click()
    expect(page).to_have_url(re.compile(rf"/investigators/{playbook_uuid}/edit$"))
    page.get_by_label("Add a step").select_option(label="List Machines")  # the picker shows display names
    page.get_by_role("button", name="Add step").click()
    expect(step(page, 2).get_by_label("Step 2 skill")).to_have_value("microsoft_defender.list_machines")
    expect(step(page, 3)).to_contain_text("Analyze")
    expect(step(page, 2).get_by_role("link", name="Microsoft Defender for Endpoint")).to_have_attribute(
        "href", "/integrations/microsoft_defender"
    )
    page.get_by_role("button", name="Add an input to step 2").click()
    step(page, 2).get_by_label("Step 2 input 1 name").fill("hostname")
    step(page, 2).get_by_label("Step 2 input 1 value").fill("{{ entities.hosts[0] }}")
    page.get_by_role("button", name="Move step 2 up").click()
    expect(step(page, 1).get_by_label("Step 1 skill")).to_have_value("microsoft_defender.list_machines")
    expect(step(page, 1).get_by_label("Step 1 input 1 value")).to_have_value("{{ entities.hosts[0] }}")
    page.get_by_label("Add a step").select_option("checkpoint")
    page.get_by_role("button", name="Add step").click()
    expect(step(page, 3)).to_contain_text("Checkpoint")
    page.get_by_role("button", name="Remove step 3").click()
    expect(page.locator(".editor-steps > li")).to_have_count(3)
    step(page, 2).get_by_label("Step 2 name").fill("Related alerts (edited)")
    page.get_by_label("What changed").fill("Check the host in Defender first")

    # An unknown skill: shown beside its step, the edit kept, nothing saved.
    step(page, 1).get_by_label("Step 1 skill").fill("No Such Skill")
    save(page)
    expect(page.locator("#editor-errors")).to_contain_text("Nothing was saved")
    expect(step(page, 1).locator(".step-errors")).to_contain_text("No skill 'No Such Skill' in the catalog.")
    expect(step(page, 2).locator(".step-errors")).to_have_count(0)
    expect(step(page, 2).get_by_label("Step 2 name")).to_have_value("Related alerts (edited)")
    screenshot(page, "investigator-editor-errors")
    assert api(stack, key, f"/serviceapi/playbooks/{playbook_uuid}")["version"] == 1

    # Inputs the skill does not take, and broken templates, are refused the same way.
    step(page, 1).get_by_label("Step 1 skill").fill("List Machines")
    step(page, 1).get_by_label("Step 1 input 1 name").fill("bogus")
    save(page)
    expect(step(page, 1).locator(".step-errors")).to_contain_text("List Machines has no input 'bogus'")
    step(page, 1).get_by_label("Step 1 input 1 name").fill("hostname")
    step(page, 1).get_by_label("Step 1 input 1 value").fill("{{ entities.hosts[0 }}")
    save(page)
    expect(step(page, 1).locator(".step-errors")).to_contain_text("Input 'hostname': template error")
    assert api(stack, key, f"/serviceapi/playbooks/{playbook_uuid}")["version"] == 1

    step(page, 1).get_by_label("Step 1 input 1 value").fill("{{ entities.hosts[0] }}")
    screenshot(page, "investigator-editor")
    save(page)
    expect(page).to_have_url(re.compile(rf"/investigators/{playbook_uuid}\?saved=2$"))
    expect(page.get_by_role("status").first).to_contain_text("Saved as version 2")
    expect(page.get_by_role("heading", name=re.compile("Steps of version 2"))).to_be_visible()
    names = page.locator(".pb-steps > li strong")
    expect(names).to_have_text(["List Machines", "Related alerts (edited)", "AI analysis"])
    expect(page.locator("ol.versions")).to_contain_text("Check the host in Defender first")
    expect(page.locator("ol.versions")).to_contain_text(ANALYST)
    page.get_by_label("Show version").select_option("1")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name=re.compile("Steps of version 1"))).to_be_visible()
    expect(page.locator(".pb-steps > li")).to_have_count(2)

    stored = api(stack, key, f"/serviceapi/playbooks/{playbook_uuid}")
    assert stored["version"] == 2
    assert stored["definition"]["steps"][0]["inputs"] == {"hostname": "{{ entities.hosts[0] }}"}

    second_id = wait_for_case(stack, key, sign_in_alert(stack, key, 2)["alert_id"])
    second = api(stack, key, f"/serviceapi/cases/{second_id}")
    assert second["playbook_uuid"] == playbook_uuid and second["playbook_version"] == 2
    assert [e["name"] for e in second["evidence"]] == [
        "Organization facts",  # recorded by the engine before every analysis, whatever the playbook says
        "List Machines",
        "Related alerts (edited)",
        "AI analysis",
    ]
    page.goto(f"/cases/{second_id}")
    expect(page.locator(".case-facts")).to_contain_text("v2")


def test_double_save_stores_one_version(page: Page, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    playbook_uuid = first_case(stack, key)["playbook_uuid"]
    sign_in(page, stack.url, ANALYST)
    page.goto(f"/investigators/{playbook_uuid}/edit")
    form: dict[str, Any] = {
        "csrf_token": page.locator("input[name=csrf_token]").first.input_value(),
        "base_version": "1",
        "step_count": "1",
        "s0-kind": "analyze",
        "s0-name": "Only the analysis",
        "op": "save",
    }
    for _ in range(2):
        response = page.request.post(f"/investigators/{playbook_uuid}/edit", form=form, max_redirects=0)
        assert response.status == 303
        assert response.headers["location"].endswith("?saved=2")
    assert api(stack, key, f"/serviceapi/playbooks/{playbook_uuid}")["version"] == 2
    different = page.request.post(f"/investigators/{playbook_uuid}/edit", form={**form, "s0-name": "Other"})
    assert different.status == 409
    assert "Version 2 was saved after the version 1 you edited" in different.text()


def test_viewer_and_other_tenant_cannot_edit(browser: Browser, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    playbook_uuid = first_case(stack, key)["playbook_uuid"]
    # The viewer sees the playbook but may not write (403); another tenant's analyst finds nothing (404).
    for email, can_see in ((VIEWER, True), (OTHER_ANALYST, False)):
        refused = 403 if can_see else 404
        context = browser.new_context(base_url=stack.url)
        page = context.new_page()
        try:
            sign_in(page, stack.url, email)
            page.goto("/investigators")
            expect(page.locator(f"tr[data-playbook='{playbook_uuid}']")).to_have_count(1 if can_see else 0)
            opened = page.goto(f"/investigators/{playbook_uuid}")
            assert opened is not None and opened.status == (200 if can_see else 404)
            expect(page.get_by_role("link", name="Edit steps")).to_have_count(0)
            edit = page.goto(f"/investigators/{playbook_uuid}/edit")
            assert edit is not None and edit.status == refused
            token = page.locator("input[name=csrf_token]").first.input_value()
            posted = page.request.post(
                f"/investigators/{playbook_uuid}/edit",
                form={"csrf_token": token, "step_count": "1", "s0-kind": "analyze", "s0-name": "x", "op": "save"},
            )
            assert posted.status == refused
        finally:
            context.close()
    assert api(stack, key, f"/serviceapi/playbooks/{playbook_uuid}")["version"] == 1


def test_investigator_pages_fit_a_phone(browser: Browser, stack: ConsoleStack) -> None:
    key = setup_tenants(stack)
    playbook_uuid = first_case(stack, key)["playbook_uuid"]
    context = browser.new_context(viewport=PHONE, base_url=stack.url)
    phone = context.new_page()
    try:
        sign_in(phone, stack.url, ANALYST)
        for path, name in (
            ("/investigators", "investigators-list-phone"),
            (f"/investigators/{playbook_uuid}", "investigator-detail-phone"),
            (f"/investigators/{playbook_uuid}/edit", "investigator-editor-phone"),
        ):
            phone.goto(path)
            expect(phone.get_by_role("heading", level=1)).to_be_visible()
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{path} scrolls sideways ({width}px)"
            screenshot(phone, name)
    finally:
        context.close()
