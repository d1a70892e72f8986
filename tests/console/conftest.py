"""Browser tests: Debian's headless Chromium (never a downloaded build) against a live Vigil on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import (
    cloudflare_fake,
    cloudflare_server,
    mde_fake,
    mde_server,
    push_fake,
    push_server,
    slack_fake,
    slack_server,
    vendor_urls,
)
from tests.support.console import CHROMIUM, CHROMIUM_ARGS, DESKTOP, ConsoleStack, sign_in
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.slack.fake import SlackFake

__all__ = [
    "cloudflare_fake",
    "cloudflare_server",
    "mde_fake",
    "mde_server",
    "push_fake",
    "push_server",
    "slack_fake",
    "slack_server",
]


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """One Chromium for the console package; stopped when it ends, because Playwright's sync API keeps an
    event loop running in the main thread that would break `asyncio.run` in the tests after it."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def stack(
    db_url: str,
    tmp_path: Path,
    mde_server: MdeFake,
    cloudflare_server: CloudflareFake,
    slack_server: SlackFake,
) -> Iterator[ConsoleStack]:
    settings = engine_settings(
        db_url,
        tmp_path,
        vendor_urls=vendor_urls(mde=mde_server.url, cloudflare=cloudflare_server.url, slack=slack_server.api_url),
    )
    with ConsoleStack(settings) as running:
        yield running


@pytest.fixture
def page(browser: Browser, stack: ConsoleStack) -> Iterator[Page]:
    context = browser.new_context(viewport=DESKTOP, base_url=stack.url)
    context.set_default_timeout(15_000)
    opened = context.new_page()
    yield opened
    context.close()


@pytest.fixture
def admin_page(page: Page, stack: ConsoleStack) -> Page:
    """A browser signed in as the stack's admin."""
    sign_in(page, stack.url)
    return page
