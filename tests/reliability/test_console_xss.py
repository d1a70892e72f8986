"""Hostile text in every free-text field that reaches a console page is shown as text, never run (issue 14 item 7).

Alerts are posted through E1 with `<script>`, event-handler attributes and a `javascript:` URL in their type and
content; the organization, provider, API key, user, connection (name and description) and a case comment carry
the same text, and the playbook is named after the alert type. Every GET page of the console router is then
opened as admin in Chromium with the CSP *bypassed*, so escaping is tested on its own: no payload may run, no
injected element or `javascript:` link may exist, and the pages that show the text show it literally. A control
then checks the second layer: with the CSP enforced, markup injected into a page is blocked and reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.console.walk import CspWatch, console_paths, populate
from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import (
    cloudflare_fake,
    cloudflare_server,
    mde_fake,
    mde_server,
    slack_fake,
    slack_server,
    vendor_urls,
)
from tests.reliability.record import record
from tests.support.console import CHROMIUM, CHROMIUM_ARGS, DESKTOP, ConsoleStack, sign_in
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.slack.fake import SlackFake

__all__ = ["cloudflare_fake", "cloudflare_server", "mde_fake", "mde_server", "slack_fake", "slack_server"]

#: Each part, if it were parsed as markup, would run script (or plant an element) that the checks below find.
PAYLOAD = "<script>__xss=1</script>\"><img src=x id=xss1 onerror=__xss=2>'><svg id=xss2 onload=__xss=3>{{7*7}}"
#: Pages that show the hostile names or content and must show them as the literal text.
SHOWN_ON = (
    "/alerts",
    "/alerts/{alert}",
    "/cases",
    "/cases/{case}",
    "/investigators",
    "/integrations/cloudflare",
    "/integrations/cloudflare/connections/{connection}",
    "/organizations",
    "/providers",
    "/api-keys",
    "/users",
)
# What a page may not contain if escaping held: a payload's side effect, its planted elements, a script link.
PROBE = """() => ({
  ran: typeof window.__xss !== "undefined",
  planted: document.querySelectorAll("#xss1, #xss2, script:not([src]), [onerror], [onload]").length,
  scriptLinks: Array.from(document.querySelectorAll("a[href], [src], form[action]")).filter(function (el) {
    return /^\\s*javascript:/i.test(el.getAttribute("href") || el.getAttribute("src") || el.getAttribute("action"));
  }).length,
  literal: document.body.innerText.includes("<script>__xss=1</script>"),
})"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def stack(
    db_url: str, tmp_path: Path, mde_server: MdeFake, cloudflare_server: CloudflareFake, slack_server: SlackFake
) -> Iterator[ConsoleStack]:
    settings = engine_settings(
        db_url,
        tmp_path,
        vendor_urls=vendor_urls(mde=mde_server.url, cloudflare=cloudflare_server.url, slack=slack_server.api_url),
    )
    with ConsoleStack(settings) as running:
        yield running


def test_hostile_text_in_every_field_is_escaped_on_every_page(
    browser: Browser, stack: ConsoleStack, backend: str
) -> None:
    tenant = populate(stack, PAYLOAD)
    shown_on = {
        path.format(alert=tenant.alert_id, case=tenant.case_id, connection=tenant.connection_uuid) for path in SHOWN_ON
    }
    context = browser.new_context(viewport=DESKTOP, base_url=stack.url, bypass_csp=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    sign_in(page, stack.url)
    failures: list[str] = []
    literal_on: set[str] = set()
    paths = console_paths(tenant)
    for path in paths:
        response = page.goto(path)
        if response is None or response.status >= 500:
            failures.append(f"{path}: {response and response.status}")
            continue
        page.wait_for_load_state("load")
        page.locator("details").evaluate_all("all => all.forEach(d => { d.open = true; })")  # content, AI trail
        found = page.evaluate(PROBE)
        if found["ran"] or found["planted"] or found["scriptLinks"]:
            failures.append(f"{path}: {found}")
        if found["literal"]:
            literal_on.add(path)
    missing = sorted(shown_on - literal_on)
    context.close()

    blocked = _csp_blocks_injected_markup(browser, stack)
    held = not failures and not missing and blocked
    record(
        "Hostile text (<script>, onerror/onload attributes, javascript: URL, {{7*7}}) in alert type and content, "
        "case comment, organization, provider, API key, user, connection name and description, playbook name; "
        "every console page opened in Chromium",
        len(paths),
        "pages",
        held,
        f"{len(failures)} of {len(paths)} pages ran a payload, planted an element or a javascript: link; "
        f"text shown literally on {len(literal_on & shown_on)} of {len(shown_on)} pages that show it"
        f"{' (missing: ' + ', '.join(missing) + ')' if missing else ''}; "
        f"with the CSP enforced, markup injected into a page {'was' if blocked else 'was NOT'} blocked and reported",
        backend=backend,
    )
    assert failures == []
    assert missing == []
    assert blocked


def _csp_blocks_injected_markup(browser: Browser, stack: ConsoleStack) -> bool:
    """The second layer: if some day a page did emit markup, the policy stops its handlers and inline scripts."""
    context = browser.new_context(viewport=DESKTOP, base_url=stack.url)
    page: Page = context.new_page()
    watch = CspWatch(page)
    page.goto("/login")
    page.evaluate(
        """() => {
        document.body.insertAdjacentHTML("beforeend", '<img src="data:," onload="window.__xss=2">');
        const script = document.createElement("script");
        script.textContent = "window.__xss = 1";
        document.body.appendChild(script);
    }"""
    )
    page.wait_for_timeout(300)
    ran = page.evaluate("typeof window.__xss !== 'undefined'")
    reported = watch.reported()
    context.close()
    return not ran and len(reported) >= 2
