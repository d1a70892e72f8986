"""The console under its Content-Security-Policy: every page and its scripted behaviour without one violation,
the security headers on API, console and static answers, and HSTS only over TLS (/docs and /redoc, under their
own policy: test_api_docs_offline.py)."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Page, expect

from tests.console.walk import CspWatch, console_paths, populate
from tests.support.console import ConsoleStack, sign_in
from vigil.web.security_headers import CONSOLE_POLICY, HSTS


def test_every_console_page_and_its_behaviour_run_without_a_csp_violation(page: Page, stack: ConsoleStack) -> None:
    watch = CspWatch(page)
    tenant = populate(stack)
    stack.add_org("BETA", "Beta Ltd")  # two organizations: the connections filter submits itself
    sign_in(page, stack.url)
    violations: list[str] = []
    paths = console_paths(tenant)
    for path in paths:
        response = page.goto(path)
        assert response is not None and response.status < 500, (path, response and response.status)
        page.wait_for_load_state("load")
        violations += watch.reported()
    assert len(paths) >= 25

    # What vigil.js does for the pages, now that none of it is inline: the custom range fields and the zone...
    page.goto("/alerts")
    filters = page.locator("#alert-filters")
    expect(filters.locator(".custom-range").first).to_be_hidden()
    filters.get_by_label("Time range").select_option("custom")
    expect(filters.locator(".custom-range").first).to_be_visible()
    assert filters.locator("input[name=tz]").input_value() != ""
    violations += watch.reported()
    # ...ticking an organization on a new API key means "only these"...
    page.goto("/api-keys/new")
    page.locator("input[name='organizations'][value='ACME']").check()
    expect(page.get_by_label("Only these organizations")).to_be_checked()
    violations += watch.reported()
    # ...the admin role dims the organization list...
    page.goto("/users/new")
    page.locator("input[name='role'][value='admin']").check()
    expect(page.locator("[data-orgs-for-role]")).to_have_class(re.compile("admin-dimmed"))
    violations += watch.reported()
    # ...a connection form shows only the chosen authentication method's fields...
    page.goto("/integrations/cloudflare/connections/new")
    page.locator("input[name='auth_method'][value='api_token']").check()
    expect(page.locator("#f-api_token")).to_be_visible()
    expect(page.locator("#f-global_api_key")).to_be_hidden()
    page.locator("input[name='auth_method'][value='global_key']").check()
    expect(page.locator("#f-global_api_key")).to_be_visible()
    expect(page.locator("#f-api_token")).to_be_hidden()
    violations += watch.reported()
    # ...the organization filter applies when chosen, HTMX searches the catalog and runs Authenticate...
    page.goto("/integrations/cloudflare")
    page.get_by_label("Organization").select_option("ACME")
    expect(page).to_have_url(re.compile(r"org=ACME"))
    page.get_by_role("button", name=re.compile("^Authenticate")).first.click()
    expect(page.locator("tr[data-connection='Acme connection']").get_by_role("status")).to_contain_text("Authenticated")
    violations += watch.reported()
    page.goto("/integrations")
    page.get_by_role("searchbox").fill("slack")
    expect(page.locator("#catalog .integration-card")).to_have_count(1)
    violations += watch.reported()
    # ...and the page that shows a new key once replaces its history entry.
    page.goto("/api-keys/new")
    page.get_by_label("Name").fill("another key")
    page.get_by_role("button", name="Create key").click()
    expect(page).to_have_url(re.compile(r"/api-keys\?created="))
    violations += watch.reported()

    assert violations == [], violations
    assert watch.logged == [], watch.logged


def test_security_headers_on_api_console_and_static_answers(stack: ConsoleStack) -> None:
    with httpx.Client(base_url=stack.url, timeout=10) as client:
        answers = {
            "console page": client.get("/login"),
            "console redirect": client.get("/alerts"),
            "API error": client.get("/serviceapi/alerts"),
            "static file": client.get("/static/vigil.js"),
            "health": client.get("/healthz"),
            "rejected body": client.post("/serviceapi/alerts", content=b"x" * 3_000_000),
        }
        for what, answer in answers.items():
            headers = answer.headers
            assert headers["content-security-policy"] == CONSOLE_POLICY, what
            assert headers["x-content-type-options"] == "nosniff", what
            assert headers["x-frame-options"] == "DENY", what
            assert headers["referrer-policy"] == "same-origin", what
            assert "strict-transport-security" not in headers, what  # plain HTTP: HSTS would be ignored anyway
        # Behind a TLS-terminating proxy that uvicorn trusts (loopback by default, FORWARDED_ALLOW_IPS otherwise).
        proxied = client.get("/login", headers={"X-Forwarded-Proto": "https"})
        assert proxied.headers["strict-transport-security"] == HSTS
    for directive in ("script-src 'self';", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'self'"):
        assert directive in CONSOLE_POLICY
    assert "unsafe" not in CONSOLE_POLICY
