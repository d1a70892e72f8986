"""/docs and /redoc render from Vigil's own assets: every request that would leave loopback is blocked, and the
pages still show the API's operations without a Content-Security-Policy violation."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route, expect

from tests.console.walk import CspWatch
from tests.engine.conftest import engine_settings
from tests.support.console import ConsoleStack

# The docs pages never touch storage, so one database is enough.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
E1 = "Create an alert (E1)"


@pytest.fixture
def stack(db_url: str, tmp_path: Path) -> Iterator[ConsoleStack]:
    settings = engine_settings(db_url, tmp_path, executor_id=f"docs-{uuid.uuid4().hex[:8]}")
    with ConsoleStack(settings, engine=False) as running:
        yield running


@pytest.fixture
def offline(page: Page) -> list[str]:
    """Block (and list) every request the page makes to anything but the Vigil server on loopback."""
    blocked: list[str] = []

    def only_loopback(route: Route) -> None:
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", only_loopback)
    return blocked


def test_swagger_ui_and_redoc_render_with_the_network_blocked(page: Page, offline: list[str]) -> None:
    watch = CspWatch(page)
    page.goto("/docs")
    expect(page.locator(".opblock-summary", has_text=E1)).to_be_visible()
    expect(page.locator(".opblock-tag", has_text="alerts")).to_be_visible()
    violations = watch.reported()

    page.goto("/redoc")
    expect(page.locator("h2", has_text=E1)).to_be_visible()
    # ReDoc rendered the schema text too: the status numbers are explained where the field is.
    expect(page.get_by_text("15 Completed").first).to_be_attached()
    violations += watch.reported()

    assert offline == [], offline
    assert violations == [] and watch.logged == [], (violations, watch.logged)


def test_docs_policy_allows_no_other_origin_and_no_unhashed_inline_script(page: Page) -> None:
    for path, inline_scripts in (("/docs", 1), ("/redoc", 0)):  # Swagger UI starts from an inline script
        answer = page.request.get(path)
        policy = answer.headers["content-security-policy"]
        assert "http" not in policy, policy  # no CDN, fonts or image host
        script_src = policy.split("script-src", 1)[1].split(";", 1)[0]
        assert "'unsafe-inline'" not in script_src and script_src.count("'sha256-") == inline_scripts, policy
        assert "frame-ancestors 'none'" in policy
        assert 'href="/static/favicon.svg"' in answer.text()


def test_the_favicon_is_served_for_every_page(page: Page) -> None:
    answer = page.request.get("/favicon.ico")
    assert answer.status == 200
    assert answer.headers["content-type"] == "image/svg+xml"
    assert answer.body().startswith(b"<svg")
