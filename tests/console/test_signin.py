"""Sign-in, sessions, CSRF and throttling of the console, in the browser and over plain HTTP."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Page, expect
from sqlalchemy import select

from tests.support.console import ADMIN_EMAIL, PASSWORD, PHONE, ConsoleStack, screenshot, sign_in
from vigil.users import service as users_service
from vigil.users.models import ConsoleUser
from vigil.users.schemas import Role


def _csrf_from(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "page has no CSRF field"
    return match.group(1)


def test_unsigned_visitor_is_sent_to_sign_in_and_back(page: Page, stack: ConsoleStack) -> None:
    page.goto("/account")
    expect(page).to_have_url(re.compile(r"/login\?next=/account$"))
    screenshot(page, "login")
    page.get_by_label("Email").fill(ADMIN_EMAIL)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_have_text("Wrong email or password.")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/account$"))
    expect(page.get_by_role("banner")).to_contain_text(ADMIN_EMAIL)
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/login$"))
    page.goto("/account")
    expect(page).to_have_url(re.compile(r"/login"))


def test_sign_in_page_is_usable_on_a_phone(page: Page, stack: ConsoleStack) -> None:
    page.set_viewport_size(PHONE)
    page.goto("/login")
    box = page.get_by_role("button", name="Sign in").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    screenshot(page, "login-phone")


def test_password_change_takes_the_current_password(page: Page, stack: ConsoleStack) -> None:
    sign_in(page, stack.url)
    page.goto("/account")
    page.get_by_label("Current password").fill("wrong wrong wrong")
    page.get_by_label("New password").fill("a new long password")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("alert")).to_have_text("The current password is not right.")
    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_label("New password").fill("a new long password")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status").first).to_have_text("Password changed.")


def test_form_post_without_csrf_token_is_refused(stack: ConsoleStack) -> None:
    with httpx.Client(base_url=stack.url, timeout=10) as client:
        client.get("/login")
        refused = client.post("/login", data={"email": ADMIN_EMAIL, "password": PASSWORD})
        assert refused.status_code == 403
        assert "did not come from Vigil" in refused.text
        assert "vigil_session" not in refused.headers.get("set-cookie", "")
        forged = client.post("/login", data={"email": ADMIN_EMAIL, "password": PASSWORD, "csrf_token": "x" * 43})
        assert forged.status_code == 403


def test_session_cookie_is_httponly_and_samesite(stack: ConsoleStack) -> None:
    with httpx.Client(base_url=stack.url, timeout=10) as client:
        token = _csrf_from(client.get("/login").text)
        signed_in = client.post("/login", data={"email": ADMIN_EMAIL, "password": PASSWORD, "csrf_token": token})
        assert signed_in.status_code == 303
        cookie = next(c for c in signed_in.headers.get_list("set-cookie") if c.startswith("vigil_session="))
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie
        assert client.get("/account").status_code == 200
        # A tampered cookie (same token, wrong signature) is not a session.
        value = client.cookies["vigil_session"]
        client.cookies.set("vigil_session", value[:-2] + ("AA" if not value.endswith("AA") else "BB"))
        assert client.get("/account", follow_redirects=False).status_code == 303


def test_repeated_wrong_passwords_are_throttled(stack: ConsoleStack) -> None:
    with httpx.Client(base_url=stack.url, timeout=10) as client:
        token = _csrf_from(client.get("/login").text)
        statuses = [
            client.post("/login", data={"email": ADMIN_EMAIL, "password": "guess", "csrf_token": token}).status_code
            for _ in range(6)
        ]
        assert statuses == [401] * 5 + [429]
        # Even the right password waits until the account's bucket refills.
        right = client.post("/login", data={"email": ADMIN_EMAIL, "password": PASSWORD, "csrf_token": token})
        assert right.status_code == 429
        assert "Too many sign-in attempts" in right.text


def test_disabling_a_user_ends_their_sessions(stack: ConsoleStack) -> None:
    stack.add_user("viewer@vigil.test", Role.VIEWER)
    with httpx.Client(base_url=stack.url, timeout=10) as client:
        token = _csrf_from(client.get("/login").text)
        client.post("/login", data={"email": "viewer@vigil.test", "password": PASSWORD, "csrf_token": token})
        assert client.get("/account").status_code == 200
        with stack.db.write() as session:
            viewer = session.scalar(select(ConsoleUser).where(ConsoleUser.email == "viewer@vigil.test"))
            admin = session.scalar(select(ConsoleUser).where(ConsoleUser.email == ADMIN_EMAIL))
            assert viewer is not None and admin is not None
            users_service.set_disabled(session, viewer.user_uuid, disabled=True, acting_user=admin.user_uuid)
        assert client.get("/account", follow_redirects=False).status_code == 303


def test_passwords_are_stored_as_argon2id(stack: ConsoleStack) -> None:
    with stack.db.read() as session:
        stored = session.scalar(select(ConsoleUser.password_hash).where(ConsoleUser.email == ADMIN_EMAIL))
    assert stored is not None and stored.startswith("$argon2id$") and PASSWORD not in stored
