"""Administration pages in the browser: organizations, providers and API keys (admins only)."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.support.console import (
    ADMIN_EMAIL,
    DESKTOP,
    ConsoleStack,
    screenshots_at_both_sizes,
    sign_in,
)
from vigil.auth import service as auth_service
from vigil.knowledge.bundle import bundles
from vigil.orgs import service as orgs_service
from vigil.users.schemas import Role


def _post_alert(stack: ConsoleStack, api_key: str, org: str, provider: str = "cloudflare") -> httpx.Response:
    """E1 as an alert source sends it (no alert_type, so nothing is investigated)."""
    return httpx.post(
        f"{stack.url}/serviceapi/alerts",
        json={"organization_code": org, "alert_provider": provider, "alert_content": '{"note": "console test"}'},
        headers={"Cookie": f"Session={api_key}"},
        timeout=10,
    )


def _csrf(page: Page) -> str:
    token = page.locator('input[name="csrf_token"]').first.get_attribute("value")
    assert token
    return token


def test_admin_creates_organization_with_inline_errors_and_renames_it(admin_page: Page, stack: ConsoleStack) -> None:
    page = admin_page
    page.goto("/organizations")
    expect(page.get_by_text("No organizations yet")).to_be_visible()
    form = page.locator("form[action='/organizations']")

    form.get_by_label("Code").fill("A")
    form.get_by_role("button", name="Create organization").click()
    expect(page.get_by_role("alert")).to_have_text("organization_code must be 2 to 16 characters of A-Z and 0-9.")
    expect(form.get_by_label("Code")).to_have_attribute("aria-invalid", "true")

    form.get_by_label("Code").fill("acme")
    form.get_by_label("Name").fill("Acme Corporation")
    form.get_by_role("button", name="Create organization").click()
    expect(page).to_have_url(re.compile(r"/organizations\?created=ACME$"))
    row = page.locator("#organizations tr[data-code='ACME']")
    expect(row).to_contain_text("Acme Corporation")
    expect(row.locator("td").nth(2)).to_have_text("0")

    form.get_by_label("Code").fill("ACME")
    form.get_by_role("button", name="Create organization").click()
    expect(page.get_by_role("alert")).to_have_text("Organization ACME already exists.")
    expect(form.get_by_label("Code")).to_have_value("ACME")

    # Alerts received show up in the organization's count.
    stack.add_org("BETA", "Beta Ltd")
    key = stack.add_key("ACME").api_key
    assert _post_alert(stack, key, "ACME").status_code == 201
    page.goto("/organizations")
    expect(row.locator("td").nth(2)).to_have_text("1")

    row.get_by_role("link", name="Edit ACME").click()
    expect(page.get_by_text("cannot change: it is part of every alert ID and case ID")).to_be_visible()
    page.get_by_label("Name").fill("   ")
    page.get_by_role("button", name="Save name").click()
    expect(page.get_by_role("alert")).to_have_text("Enter a name.")
    page.get_by_label("Name").fill("Acme Holdings")
    page.get_by_role("button", name="Save name").click()
    expect(page).to_have_url(re.compile(r"/organizations\?renamed=ACME$"))
    expect(row).to_contain_text("Acme Holdings")
    expect(page.locator("#organizations tbody tr")).to_have_count(2)
    screenshots_at_both_sizes(page, "admin-organizations")
    row.get_by_role("link", name="Edit ACME").click()
    screenshots_at_both_sizes(page, "admin-organization-edit")


def test_api_key_is_shown_once_works_for_its_organization_only_and_dies_when_revoked(
    admin_page: Page, stack: ConsoleStack
) -> None:
    page = admin_page
    stack.add_org("BETA")
    page.goto("/organizations")
    page.get_by_label("Code").fill("ACME")
    page.get_by_role("button", name="Create organization").click()
    expect(page.locator("#organizations tr[data-code='ACME']")).to_be_visible()

    page.goto("/api-keys")
    expect(page.get_by_text("No API keys yet.")).to_be_visible()
    page.get_by_role("link", name="Create API key").click()
    page.get_by_label("Name").fill("ACME SIEM forwarder")
    page.get_by_label("Only these organizations").check()
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("alert")).to_have_text("Choose at least one organization, or allow all organizations.")
    expect(page.get_by_label("Name")).to_have_value("ACME SIEM forwarder")
    page.locator("input[name='organizations'][value='ACME']").check()
    page.get_by_label("Expires after (days)").fill("0")
    assert page.get_by_label("Expires after (days)").evaluate("input => input.validity.rangeUnderflow")
    screenshots_at_both_sizes(page, "admin-api-key-new")
    page.get_by_label("Expires after (days)").fill("30")
    with page.expect_response(lambda r: r.request.method == "POST" and r.url.endswith("/api-keys")) as answer:
        page.get_by_role("button", name="Create key").click()
    assert answer.value.status == 201
    assert answer.value.headers["cache-control"] == "no-store"
    expect(page.get_by_text("It will not be shown again")).to_be_visible()
    api_key = page.locator("#new-api-key").inner_text().strip()
    assert re.fullmatch(r"vgl_live_[A-Za-z0-9_-]{40,}", api_key)
    expect(page.get_by_role("button", name="Copy key")).to_have_attribute("data-copy", "#new-api-key")
    screenshots_at_both_sizes(page, "admin-api-key-created")

    assert _post_alert(stack, api_key, "ACME").status_code == 201
    refused = _post_alert(stack, api_key, "BETA")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "organization_forbidden"

    # Reloading (or coming back) shows the list, never the key again; the list has only the prefix.
    page.reload()
    expect(page).to_have_url(re.compile(r"/api-keys\?created="))
    expect(page.get_by_text("cannot be shown again")).to_be_visible()
    assert api_key not in page.content()
    row = page.locator("#api-keys tbody tr").first
    prefix = api_key[: len("vgl_live_") + 4]
    expect(row).to_contain_text(f"{prefix}…")
    expect(row).to_contain_text("ACME SIEM forwarder")
    expect(row).to_contain_text(ADMIN_EMAIL)
    expect(row).not_to_contain_text("BETA")
    expect(row.locator("td").nth(6)).not_to_have_text("Never")  # last used is stamped by the alerts above
    expect(row.locator("td").nth(7)).to_have_text("Active")
    html = page.request.get("/api-keys").text()
    assert prefix in html and api_key not in html and api_key[len(prefix) :] not in html
    screenshots_at_both_sizes(page, "admin-api-keys")

    row.get_by_role("link", name="Revoke ACME SIEM forwarder").click()
    expect(page.get_by_role("heading", name="Revoke API key “ACME SIEM forwarder”?")).to_be_visible()
    revoke_url = page.url
    screenshots_at_both_sizes(page, "admin-api-key-revoke")
    page.get_by_role("button", name="Revoke key").click()
    expect(page).to_have_url(re.compile(r"/api-keys\?revoked="))
    expect(page.locator("#api-keys tbody tr").first.locator("td").nth(7)).to_have_text("Revoked")
    rejected = _post_alert(stack, api_key, "ACME")
    assert rejected.status_code == 401
    assert rejected.json()["error"]["code"] == "revoked_api_key"

    # Revoking again changes nothing and says so.
    again = page.request.post(revoke_url, form={"csrf_token": _csrf(page)}, max_redirects=0)
    assert again.status == 303
    page.goto(revoke_url)
    expect(page.get_by_text("This key is already revoked")).to_be_visible()
    expect(page.get_by_role("button", name="Revoke key")).to_have_count(0)


def test_all_organization_key_reaches_every_organization(admin_page: Page, stack: ConsoleStack) -> None:
    stack.add_org("ACME")
    stack.add_org("BETA")
    page = admin_page
    page.goto("/api-keys/new")
    page.get_by_label("Name").fill("MSSP collector")
    page.get_by_role("button", name="Create key").click()
    api_key = page.locator("#new-api-key").inner_text().strip()
    assert _post_alert(stack, api_key, "ACME").status_code == 201
    assert _post_alert(stack, api_key, "BETA").status_code == 201
    page.goto("/api-keys")
    row = page.locator("#api-keys tbody tr").first
    expect(row).to_contain_text("All organizations")
    expect(row.locator("td").nth(5)).to_have_text("Never")


def test_providers_can_be_added_renamed_and_disabled_which_intake_honours(
    admin_page: Page, stack: ConsoleStack
) -> None:
    stack.add_org("ACME")
    api_key = stack.add_key().api_key
    page = admin_page
    page.goto("/providers")
    cloudflare = page.locator("#providers tr[data-provider='cloudflare']")
    expect(cloudflare).to_contain_text("Built-in")
    expect(cloudflare).to_contain_text("Enabled")

    form = page.locator("form[action='/providers']")
    form.get_by_label("Identifier").fill("Bad Slug")
    form.get_by_role("button", name="Add provider").click()
    expect(page.get_by_role("alert")).to_contain_text("alert_provider must be a lowercase slug")
    form.get_by_label("Identifier").fill("cloudflare")
    form.get_by_role("button", name="Add provider").click()
    expect(page.get_by_role("alert")).to_have_text("Provider cloudflare already exists.")
    form.get_by_label("Identifier").fill("acme_edr")
    form.get_by_label("Display name").fill("ACME EDR")
    form.get_by_role("button", name="Add provider").click()
    added = page.locator("#providers tr[data-provider='acme_edr']")
    expect(added).to_contain_text("ACME EDR")
    expect(added).to_contain_text("Added")
    assert _post_alert(stack, api_key, "ACME", "acme_edr").status_code == 201

    added.get_by_role("link", name="Edit acme_edr").click()
    page.get_by_label("Display name").fill("Acme Endpoint Detection")
    page.get_by_role("button", name="Save name").click()
    expect(page.get_by_role("status")).to_have_text("Provider acme_edr renamed.")
    expect(added).to_contain_text("Acme Endpoint Detection")

    added.get_by_role("button", name="Disable acme_edr").click()
    expect(added).to_contain_text("Disabled")
    refused = _post_alert(stack, api_key, "ACME", "acme_edr")
    assert refused.status_code == 422
    assert refused.json()["error"]["details"][0]["field"] == "alert_provider"
    listed = httpx.get(f"{stack.url}/serviceapi/providers", headers={"Authorization": f"Bearer {api_key}"}).json()
    assert "acme_edr" not in {p["alert_provider"] for p in listed["providers"]}

    # A built-in can be disabled too, but never deleted.
    cloudflare.get_by_role("button", name="Disable cloudflare").click()
    expect(cloudflare).to_contain_text("Disabled")
    assert _post_alert(stack, api_key, "ACME", "cloudflare").status_code == 422
    cloudflare.get_by_role("button", name="Enable cloudflare").click()
    expect(cloudflare).to_contain_text("Enabled")
    assert _post_alert(stack, api_key, "ACME", "cloudflare").status_code == 201
    screenshots_at_both_sizes(page, "admin-providers")
    cloudflare.get_by_role("link", name="Edit cloudflare").click()
    expect(page.get_by_role("button", name="Delete provider")).to_have_count(0)

    # A provider with alerts can only be disabled; an unused one can be deleted.
    page.goto("/providers/acme_edr/edit")
    screenshots_at_both_sizes(page, "admin-provider-edit")
    page.get_by_role("button", name="Delete provider").click()
    expect(page.get_by_role("alert")).to_have_text("acme_edr has alerts, so it cannot be deleted; disable it instead.")
    page.goto("/providers")
    form.get_by_label("Identifier").fill("unused_source")
    form.get_by_role("button", name="Add provider").click()
    page.goto("/providers/unused_source/edit")
    page.get_by_role("button", name="Delete provider").click()
    expect(page.get_by_role("status")).to_have_text("Provider unused_source deleted.")
    expect(page.locator("#providers tr[data-provider='unused_source']")).to_have_count(0)


def test_administration_is_for_admins_only(browser: Browser, stack: ConsoleStack) -> None:
    stack.add_org("ACME")
    stack.add_user("analyst@vigil.test", Role.ANALYST, "ACME")
    stack.add_user("viewer@vigil.test", Role.VIEWER, "ACME")
    for email in ("analyst@vigil.test", "viewer@vigil.test"):
        context = browser.new_context(viewport=DESKTOP, base_url=stack.url)
        page = context.new_page()
        sign_in(page, stack.url, email)
        page.goto("/account")
        nav = page.get_by_role("navigation", name="Main")
        for label in ("Organizations", "Providers", "API keys", "Users", "Settings"):
            expect(nav.get_by_role("link", name=label)).to_have_count(0)
        for path in (
            "/organizations",
            "/providers",
            "/api-keys",
            "/api-keys/new",
            "/organizations/ACME/edit",
            "/settings",
        ):
            response = page.goto(path)
            assert response is not None and response.status == 403, path
            expect(page.get_by_role("heading", name="Not allowed")).to_be_visible()
        token = _csrf(page)
        for path, form in (
            ("/organizations", {"organization_code": "EVIL", "name": "x"}),
            ("/providers", {"alert_provider": "evil"}),
            ("/api-keys", {"name": "stolen"}),
            ("/providers/cloudflare/enabled", {"enabled": "0"}),
            ("/settings", {"checkpoint_timeout_seconds": "5"}),
            ("/organizations/ACME/checkpoint-timeout", {"checkpoint_timeout_seconds": "5"}),
        ):
            refused = page.request.post(path, form={"csrf_token": token, **form}, max_redirects=0)
            assert refused.status == 403, path
        context.close()
    with stack.db.read() as session:
        assert orgs_service.get_organization_by_code(session, "EVIL") is None
        assert auth_service.list_api_keys(session) == []
        assert orgs_service.get_enabled_provider(session, "cloudflare") is not None
        assert orgs_service.service_checkpoint_timeout(session) is None
        assert orgs_service.get_organization(session, "ACME").checkpoint_timeout_seconds is None


def test_checkpoint_timeout_service_wide_and_per_organization(admin_page: Page, stack: ConsoleStack) -> None:
    stack.add_org("ACME")
    page = admin_page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Settings").click()
    expect(page).to_have_url(re.compile(r"/settings$"))
    expect(page.locator("#timeout-effective")).to_contain_text("15 min")
    expect(page.locator("#timeout-effective")).to_contain_text("VIGIL_CHECKPOINT_TIMEOUT_SECONDS")
    field = page.get_by_label("Timeout (seconds)")
    for bad, message in (
        ("4", "The checkpoint timeout must be from 5 to 604800 seconds (7 days)."),
        ("ten", "The checkpoint timeout must be a whole number of seconds (5 to 604800), or empty for the default."),
    ):
        field.fill(bad)
        page.get_by_role("button", name="Save settings").click()
        expect(page.get_by_role("alert")).to_have_text(message)
        expect(field).to_have_attribute("aria-invalid", "true")
        expect(field).to_have_value(bad)
    field.fill("1800")
    page.get_by_role("button", name="Save settings").click()
    expect(page).to_have_url(re.compile(r"/settings\?saved=1$"))
    expect(page.locator("#timeout-effective")).to_contain_text("30 min (set here)")
    expect(page.get_by_text("by admin@")).to_be_visible()
    screenshots_at_both_sizes(page, "admin-settings")
    with stack.db.read() as session:
        assert orgs_service.service_checkpoint_timeout(session) == 1800

    page.goto("/organizations/ACME/edit")
    expect(page.locator("#timeout-effective")).to_contain_text("30 min (the service-wide default)")
    org_field = page.get_by_label("Timeout (seconds)")
    expect(org_field).to_have_value("")
    org_field.fill("604801")
    page.get_by_role("button", name="Save timeout").click()
    expect(page.get_by_role("alert")).to_have_text("The checkpoint timeout must be from 5 to 604800 seconds (7 days).")
    expect(org_field).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Name")).not_to_have_attribute("aria-invalid", "true")
    org_field.fill("300")
    page.get_by_role("button", name="Save timeout").click()
    expect(page).to_have_url(re.compile(r"/organizations/ACME/edit\?saved=timeout$"))
    expect(page.get_by_role("status")).to_contain_text("Checkpoint timeout saved")
    expect(page.locator("#timeout-effective")).to_contain_text("5 min (this organization's own)")
    screenshots_at_both_sizes(page, "admin-organization-timeout")
    page.goto("/settings")
    expect(page.locator("#checkpoint-timeout")).to_contain_text("ACME 5 min")
    with stack.db.read() as session:
        assert orgs_service.get_organization(session, "ACME").checkpoint_timeout_seconds == 300

    # Empty returns each to the next default.
    page.goto("/organizations/ACME/edit")
    page.get_by_label("Timeout (seconds)").fill("")
    page.get_by_role("button", name="Save timeout").click()
    expect(page.locator("#timeout-effective")).to_contain_text("30 min (the service-wide default)")
    page.goto("/settings")
    page.get_by_label("Timeout (seconds)").fill(" ")
    page.get_by_role("button", name="Save settings").click()
    expect(page.locator("#timeout-effective")).to_contain_text("15 min (VIGIL_CHECKPOINT_TIMEOUT_SECONDS)")
    with stack.db.read() as session:
        assert orgs_service.service_checkpoint_timeout(session) is None
        assert orgs_service.get_organization(session, "ACME").checkpoint_timeout_seconds is None


def test_settings_page_lists_the_knowledge_bundles_with_their_provenance(admin_page: Page) -> None:
    page = admin_page
    page.goto("/settings")
    table = page.locator("#knowledge")
    shipped = bundles()
    expect(table.locator("tbody tr")).to_have_count(len(shipped))
    for bundle in shipped:
        row = table.locator(f'tr[data-bundle="{bundle.name}"]')
        for text in (
            bundle.title,
            bundle.source,
            bundle.commit[:12],
            bundle.date,
            bundle.licence,
            bundle.counts_text(),
        ):
            expect(row).to_contain_text(text)
        expect(row.locator("code")).to_have_attribute("title", bundle.commit)
    expect(table.locator('tr[data-bundle="attack"]')).to_contain_text("The MITRE Corporation")
    for name in ("lolrmm", "lolbas", "hijacklibs", "loldrivers"):  # the dual-use catalogues, from provenance alone
        expect(table.locator(f'tr[data-bundle="{name}"]')).to_have_count(1)
    expect(table.locator('tr[data-bundle="lolbas"]')).to_contain_text("GPL-3.0-only")
