"""Users page in the browser: invite with a one-time password, first sign-in, roles, disable, reset."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.console import (
    ADMIN_EMAIL,
    DESKTOP,
    PASSWORD,
    ConsoleStack,
    screenshots_at_both_sizes,
    sign_in,
)

ANALYST = "dana.analyst@acme.example"
NEW_PASSWORD = "dana picks her own passphrase"


def _fresh_context(browser: Browser, stack: ConsoleStack) -> BrowserContext:
    context = browser.new_context(viewport=DESKTOP, base_url=stack.url)
    context.set_default_timeout(15_000)
    return context


def _invite_analyst(page: Page) -> str:
    """Invite ANALYST for ACME through the form; returns the one-time password read from the page."""
    page.goto("/users")
    page.get_by_role("link", name="Invite user").click()
    page.get_by_label("Email").fill(ANALYST)
    page.get_by_label("Name", exact=True).fill("Dana Analyst")
    page.get_by_label("Analyst").check()
    page.get_by_role("button", name="Invite user").click()
    expect(page.get_by_role("alert")).to_have_text(
        "Choose at least one organization for the analyst role (admins see all organizations)."
    )
    expect(page.get_by_label("Email")).to_have_value(ANALYST)
    page.locator("input[name='organizations'][value='ACME']").check()
    screenshots_at_both_sizes(page, "users-invite")
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/users")) as answer:
        page.get_by_role("button", name="Invite user").click()
    assert answer.value.headers["cache-control"] == "no-store"
    expect(page.get_by_text("It will not be shown again")).to_be_visible()
    expect(page.get_by_role("button", name="Copy password")).to_have_attribute("data-copy", "#one-time-password")
    one_time = page.locator("#one-time-password").inner_text().strip()
    assert len(one_time) >= 12
    screenshots_at_both_sizes(page, "users-password-shown")
    return one_time


def test_invited_analyst_chooses_a_password_sees_only_their_organization_and_is_cut_off_when_disabled(
    browser: Browser, admin_page: Page, stack: ConsoleStack
) -> None:
    stack.add_org("ACME", "Acme Corporation")
    stack.add_org("BETA", "Beta Ltd")
    admin = admin_page
    one_time = _invite_analyst(admin)

    # Reloading the answer shows the user's page, never the password again.
    admin.reload()
    expect(admin).to_have_url(re.compile(r"/users/[0-9a-f-]{36}\?created=1$"))
    expect(admin.get_by_role("status")).to_have_text("User invited.")
    assert one_time not in admin.content()
    user_url = admin.url.split("?")[0]

    admin.goto("/users")
    row = admin.locator(f"#users tr[data-user='{ANALYST}']")
    expect(row).to_contain_text("Dana Analyst")
    expect(row).to_contain_text("Analyst")
    expect(row).to_contain_text("ACME")
    expect(row).not_to_contain_text("BETA")
    expect(row).to_contain_text("Invited")
    expect(row).to_contain_text("Password pending")
    assert one_time not in admin.content()

    analyst_context = _fresh_context(browser, stack)
    analyst = analyst_context.new_page()
    analyst.goto("/login?next=/alerts")
    analyst.get_by_label("Email").fill(ANALYST)
    analyst.get_by_label("Password").fill(one_time)
    analyst.get_by_role("button", name="Sign in").click()
    expect(analyst).to_have_url(re.compile(r"/account/choose-password\?next=%2Falerts$"))
    expect(analyst.get_by_role("heading", name="Choose your password")).to_be_visible()
    # Skipping the page does not help: every other page sends them back to it.
    analyst.goto("/cases")
    expect(analyst).to_have_url(re.compile(r"/account/choose-password\?next=/cases$"))
    analyst.get_by_label("One-time password").fill(one_time)
    analyst.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    analyst.get_by_label("Repeat new password").fill(NEW_PASSWORD + " typo")
    analyst.get_by_role("button", name="Save password and continue").click()
    expect(analyst.get_by_role("alert")).to_have_text("The two new passwords differ.")
    screenshots_at_both_sizes(analyst, "users-choose-password")
    analyst.get_by_label("One-time password").fill(one_time)
    analyst.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    analyst.get_by_label("Repeat new password").fill(NEW_PASSWORD)
    analyst.get_by_role("button", name="Save password and continue").click()
    expect(analyst).to_have_url(re.compile(r"/cases$"))  # back where they were going
    analyst.goto("/alerts")

    # Only organization ACME is offered, and nothing of administration.
    options = analyst.locator("#alert-filters select[name='org'] option")
    expect(options).to_have_count(2)
    assert options.evaluate_all("els => els.map(e => e.value)") == ["", "ACME"]
    nav = analyst.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Users")).to_have_count(0)
    for path in ("/users", "/users/new", user_url):
        response = analyst.goto(path)
        assert response is not None and response.status == 403, path

    admin.goto("/users")
    expect(row).to_contain_text("Active")
    expect(row).not_to_contain_text("Password pending")

    # Disabling ends the analyst's session at once and blocks sign-in.
    row.get_by_role("link", name=f"Edit {ANALYST}").click()
    admin.get_by_role("button", name="Disable user").click()
    expect(admin.get_by_role("status")).to_have_text(
        "User disabled; their sessions have ended and they cannot sign in."
    )
    analyst.goto("/alerts")
    expect(analyst).to_have_url(re.compile(r"/login\?next=/alerts$"))
    # The browser still holds the ended session's cookie: the sign-in page drops it, so signing in works.
    analyst.goto("/login?next=/alerts")
    analyst.get_by_label("Email").fill(ANALYST)
    analyst.get_by_label("Password").fill(NEW_PASSWORD)
    analyst.get_by_role("button", name="Sign in").click()
    expect(analyst.get_by_role("alert")).to_have_text("Wrong email or password.")
    admin.goto("/users")
    expect(row).to_contain_text("Disabled")

    # Enabled again, the analyst signs in with their own password (no password change asked).
    admin.goto(user_url)
    admin.get_by_role("button", name="Enable user").click()
    expect(admin.get_by_role("status")).to_have_text("User enabled; they can sign in again.")
    sign_in(analyst, stack.url, ANALYST, NEW_PASSWORD)
    expect(analyst).to_have_url(re.compile(r"/alerts$"))
    analyst_context.close()


def test_admin_edits_role_and_organizations_and_resets_a_password(
    browser: Browser, admin_page: Page, stack: ConsoleStack
) -> None:
    stack.add_org("ACME")
    stack.add_org("BETA")
    admin = admin_page
    _invite_analyst(admin)
    admin.goto("/users")
    admin.get_by_role("link", name=f"Edit {ANALYST}").click()
    user_url = admin.url

    admin.get_by_label("Viewer").check()
    admin.locator("input[name='organizations'][value='ACME']").uncheck()
    admin.get_by_role("button", name="Save changes").click()
    expect(admin.get_by_role("alert")).to_have_text(
        "Choose at least one organization for the viewer role (admins see all organizations)."
    )
    expect(admin.get_by_label("Viewer")).to_be_checked()
    admin.locator("input[name='organizations'][value='BETA']").check()
    admin.get_by_label("Name", exact=True).fill("Dana Viewer")
    admin.get_by_role("button", name="Save changes").click()
    expect(admin.get_by_role("status")).to_have_text("Changes saved.")
    screenshots_at_both_sizes(admin, "users-edit")
    admin.goto("/users")
    row = admin.locator(f"#users tr[data-user='{ANALYST}']")
    expect(row).to_contain_text("Dana Viewer")
    expect(row).to_contain_text("Viewer")
    expect(row).to_contain_text("BETA")
    expect(row).not_to_contain_text("ACME")
    screenshots_at_both_sizes(admin, "users-list")

    # A reset hands out a new one-time password, shown once, and the old one stops working.
    admin.goto(user_url)
    admin.get_by_role("link", name="Reset password…").click()
    screenshots_at_both_sizes(admin, "users-reset-confirm")
    with admin.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/reset-password")) as answer:
        admin.get_by_role("button", name="Reset password").click()
    assert answer.value.headers["cache-control"] == "no-store"
    new_one_time = admin.locator("#one-time-password").inner_text().strip()
    admin.reload()
    expect(admin.get_by_role("status")).to_have_text("Password reset; the user's sessions have ended.")
    assert new_one_time not in admin.content()

    viewer_context = _fresh_context(browser, stack)
    viewer = viewer_context.new_page()
    viewer.goto("/login")
    viewer.get_by_label("Email").fill(ANALYST)
    viewer.get_by_label("Password").fill(new_one_time)
    viewer.get_by_role("button", name="Sign in").click()
    expect(viewer).to_have_url(re.compile(r"/account/choose-password"))
    # Choosing the one-time password itself again is not a new password.
    viewer.get_by_label("One-time password").fill(new_one_time)
    viewer.get_by_label("New password", exact=True).fill(new_one_time)
    viewer.get_by_label("Repeat new password").fill(new_one_time)
    viewer.get_by_role("button", name="Save password and continue").click()
    expect(viewer.get_by_role("alert")).to_have_text("Choose a password different from the current one.")
    viewer_context.close()


def test_admin_cannot_demote_or_disable_themself(admin_page: Page, stack: ConsoleStack) -> None:
    admin = admin_page
    admin.goto("/users")
    row = admin.locator(f"#users tr[data-user='{ADMIN_EMAIL}']")
    expect(row).to_contain_text("(you)")
    row.get_by_role("link", name=f"Edit {ADMIN_EMAIL}").click()
    expect(admin.get_by_label("Analyst")).to_be_disabled()
    expect(admin.get_by_text("You cannot disable your own account; another admin can.")).to_be_visible()
    expect(admin.get_by_role("button", name="Disable user")).to_have_count(0)
    user_url = admin.url
    token = admin.locator('input[name="csrf_token"]').first.get_attribute("value")
    assert token

    # Forged posts get the service's refusal, shown on the page.
    demoted = admin.request.post(user_url, form={"csrf_token": token, "role": "viewer", "name": "x"})
    assert demoted.status == 422
    assert "You cannot take the admin role away from yourself." in demoted.text()
    disabled = admin.request.post(f"{user_url}/disable", form={"csrf_token": token})
    assert disabled.status == 422
    assert "You cannot disable your own account." in disabled.text()
    reset = admin.request.post(f"{user_url}/reset-password", form={"csrf_token": token})
    assert reset.status == 422
    assert "Change your own password on the Your account page" in reset.text()

    admin.goto("/account")
    expect(admin.get_by_role("banner")).to_contain_text("admin")
    admin.goto("/users")
    expect(row).to_contain_text("Admin")
    expect(row).to_contain_text("Active")
    # The admin's own password still works: nothing was reset.
    admin.context.clear_cookies()
    sign_in(admin, stack.url, ADMIN_EMAIL, PASSWORD)
    expect(admin).not_to_have_url(re.compile(r"choose-password"))
