"""Vigil (API + console + investigation engine) on a real loopback port, driven by headless Chromium."""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
from playwright.sync_api import Page

from vigil.app import create_app
from vigil.auth import service as auth_service
from vigil.auth.schemas import ApiKeyCreated
from vigil.db.session import Database
from vigil.integrations.live_server import LiveServer
from vigil.investigations.engine import build_engine
from vigil.orgs import service as orgs_service
from vigil.settings import Settings
from vigil.users import service as users_service
from vigil.users.schemas import Role

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
ADMIN_EMAIL = "admin@vigil.test"
PASSWORD = "correct horse battery staple"
OUTPUT_DIR = Path(os.environ.get("VIGIL_TEST_OUTPUT", Path(__file__).resolve().parents[2] / "test-output"))


class ConsoleStack:
    """One private Vigil for a browser test; `engine=True` also runs investigations in-process."""

    def __init__(self, settings: Settings, *, engine: bool = True) -> None:
        self.settings = settings
        self.db = Database(settings)
        self.engine = build_engine(settings, self.db, role="test") if engine else None
        self.app = create_app(settings, self.db, engine=self.engine)
        self.server = LiveServer(self.app)

    @property
    def url(self) -> str:
        return self.server.url

    def __enter__(self) -> ConsoleStack:
        self.server.__enter__()
        self.add_user(ADMIN_EMAIL, Role.ADMIN)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.__exit__(exc_type, exc, tb)
        self.db.dispose()

    def add_org(self, code: str, name: str | None = None) -> None:
        with self.db.write() as session:
            orgs_service.create_organization(session, code, name)

    def add_user(self, email: str, role: Role, *orgs: str, password: str = PASSWORD) -> None:
        with self.db.write() as session:
            users_service.create_user(session, email=email, password=password, role=role, organization_codes=orgs)

    def add_key(self, *orgs: str, name: str = "test key") -> ApiKeyCreated:
        with self.db.write() as session:
            return auth_service.create_api_key(session, name=name, created_by="test", organization_codes=orgs)

    def post_alert(self, api_key: str, body: dict[str, Any]) -> dict[str, Any]:
        """E1 over real HTTP, as an alert source would call it."""
        response = httpx.post(
            f"{self.url}/serviceapi/alerts", json=body, headers={"Cookie": f"Session={api_key}"}, timeout=10
        )
        assert response.status_code == 201, response.text
        created: dict[str, Any] = response.json()
        return created


def sign_in(page: Page, base_url: str, email: str = ADMIN_EMAIL, password: str = PASSWORD) -> None:
    page.goto(f"{base_url}/login")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/login" not in url)


def screenshot(page: Page, name: str) -> Path:
    """Full-page PNG under test-output/screenshots/ (looked at by people reviewing the console)."""
    path = OUTPUT_DIR / "screenshots" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    return path


def screenshots_at_both_sizes(page: Page, name: str) -> None:
    """The page at desktop size and at 390 px wide, with nothing sticking out sideways on the phone."""
    screenshot(page, name)
    page.set_viewport_size(PHONE)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at 390px"
    screenshot(page, f"{name}-phone")
    page.set_viewport_size(DESKTOP)
