"""An organization's own AI model in the console (Organizations → Edit → AI model) and the service-wide model on
Settings; the key is typed into a password field and never shown again."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.console import DESKTOP, ConsoleStack, screenshots_at_both_sizes, sign_in
from vigil.ai.organization_model import KEY_FIELD, set_override
from vigil.integrations.secrets import SecretBox
from vigil.orgs.service import get_organization
from vigil.users.schemas import Role

LOCAL_MODEL = "openai-chat:llama3.1"
LOCAL_URL = "http://gpu.internal:8000/v1"
SECRET = "sk-console-secret-5f1c0d9e2b7a"


@pytest.fixture(autouse=True)
def _no_provider_keys_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)


def _stored(stack: ConsoleStack, code: str = "ACME") -> tuple[str | None, str | None, str | None]:
    """The organization's model, base URL and the token its key is stored as."""
    with stack.db.read() as session:
        organization = get_organization(session, code)
        return organization.ai_model, organization.ai_base_url, organization.ai_api_key


def test_admin_sets_keeps_removes_and_clears_an_organization_model(admin_page: Page, stack: ConsoleStack) -> None:
    stack.add_org("ACME")
    page = admin_page
    page.goto("/organizations/ACME/edit")
    section = page.locator("#ai-model")
    model, base_url, key = (section.get_by_label(label) for label in ("Model", "Base URL", "API key"))
    expect(page.locator("#model-effective")).to_have_text("builtin (the service-wide model)")
    expect(page.locator("#model-key")).to_have_text("none stored")
    expect(key).to_have_attribute("type", "password")

    # Refusals are inline, keep what was typed except the key, and mark only the field at fault.
    model.fill("nonsense:some-model")
    key.fill(SECRET)
    section.get_by_role("button", name="Save model").click()
    expect(page.get_by_role("alert")).to_contain_text("AI model 'nonsense:some-model' cannot be used")
    expect(model).to_have_attribute("aria-invalid", "true")
    expect(model).to_have_value("nonsense:some-model")
    expect(key).to_have_value("")
    expect(page.get_by_label("Name")).not_to_have_attribute("aria-invalid", "true")
    assert SECRET not in page.content()
    model.fill(LOCAL_MODEL)
    base_url.fill("http://user:pw@gpu.internal:8000/v1")
    section.get_by_role("button", name="Save model").click()
    expect(page.get_by_role("alert")).to_have_text(
        "The base URL must not hold a user name or password; give the key as the API key."
    )
    expect(base_url).to_have_attribute("aria-invalid", "true")
    expect(model).not_to_have_attribute("aria-invalid", "true")
    assert _stored(stack) == (None, None, None)

    base_url.fill(LOCAL_URL)
    key.fill(SECRET)
    section.get_by_role("button", name="Save model").click()
    expect(page).to_have_url(re.compile(r"/organizations/ACME/edit\?saved=ai-model$"))
    expect(page.get_by_role("status")).to_have_text("AI model saved; investigations started from now on use it.")
    expect(page.locator("#model-effective")).to_have_text(f"{LOCAL_MODEL} (this organization's own)")
    expect(page.locator("#model-key")).to_have_text("a key is stored (never shown)")
    expect(model).to_have_value(LOCAL_MODEL)
    expect(base_url).to_have_value(LOCAL_URL)
    expect(key).to_have_value("")
    expect(key).to_have_attribute("placeholder", "a key is stored · leave blank to keep")
    assert SECRET not in page.content() and SECRET not in page.request.get("/organizations/ACME/edit").text()
    screenshots_at_both_sizes(page, "admin-organization-ai-model")
    stored_model, stored_url, token = _stored(stack)
    assert (stored_model, stored_url) == (LOCAL_MODEL, LOCAL_URL) and token is not None and SECRET not in token
    assert SecretBox.from_settings(stack.settings).decrypt(token)[KEY_FIELD] == SECRET

    # Saving with the key field empty keeps the key; the box removes it.
    section.get_by_role("button", name="Save model").click()
    expect(page.locator("#model-key")).to_have_text("a key is stored (never shown)")
    assert _stored(stack)[2] == token
    section.get_by_label("Remove the stored key").check()
    section.get_by_role("button", name="Save model").click()
    expect(page.locator("#model-key")).to_have_text("none stored")
    expect(section.get_by_label("Remove the stored key")).to_have_count(0)
    assert _stored(stack) == (LOCAL_MODEL, LOCAL_URL, None)

    # An empty model goes back to the service-wide one, dropping the base URL.
    model.fill("")
    section.get_by_role("button", name="Save model").click()
    expect(page.locator("#model-effective")).to_have_text("builtin (the service-wide model)")
    expect(base_url).to_have_value("")
    assert _stored(stack) == (None, None, None)


def test_settings_shows_the_service_wide_model_and_who_has_their_own(admin_page: Page, stack: ConsoleStack) -> None:
    stack.add_org("ACME")
    stack.add_org("BETA")
    with stack.db.write() as session:
        box = SecretBox.from_settings(stack.settings)
        set_override(session, "BETA", box, model=LOCAL_MODEL, base_url=LOCAL_URL, api_key=SECRET)
    page = admin_page
    page.goto("/settings")
    section = page.locator("section#ai-model")
    expect(page.locator("#service-model")).to_have_text("builtin (VIGIL_AI_MODEL)")
    expect(page.locator("#service-model-key")).to_have_text("not set (VIGIL_AI_API_KEY)")
    expect(section).to_contain_text(f"BETA {LOCAL_MODEL}")
    expect(section).not_to_contain_text("ACME")
    assert SECRET not in page.content()
    screenshots_at_both_sizes(page, "admin-settings-ai-model")
    section.get_by_role("link", name="BETA").click()
    expect(page).to_have_url(re.compile(r"/organizations/BETA/edit#ai-model$"))
    expect(page.locator("#model-effective")).to_have_text(f"{LOCAL_MODEL} (this organization's own)")
    expect(page.locator("#model-key")).to_have_text("a key is stored (never shown)")
    assert SECRET not in page.content()


def test_only_admins_with_the_form_token_change_an_organization_model(browser: Browser, stack: ConsoleStack) -> None:
    stack.add_org("ACME")
    stack.add_user("analyst@vigil.test", Role.ANALYST, "ACME")
    form = {"ai_model": LOCAL_MODEL, "ai_base_url": "http://attacker.example/v1", "ai_api_key": SECRET}
    for email in ("analyst@vigil.test", None):
        context = browser.new_context(viewport=DESKTOP, base_url=stack.url)
        page = context.new_page()
        if email:
            sign_in(page, stack.url, email)
            page.goto("/account")
            token = page.locator('input[name="csrf_token"]').first.get_attribute("value")
            assert token
            response = page.goto("/organizations/ACME/edit")
            assert response is not None and response.status == 403
            refused = page.request.post("/organizations/ACME/ai-model", form={"csrf_token": token, **form})
        else:
            sign_in(page, stack.url)  # the admin, but without the form's token
            refused = page.request.post("/organizations/ACME/ai-model", form=form, max_redirects=0)
        assert refused.status == 403, email
        assert SECRET not in refused.text()
        context.close()
    assert _stored(stack) == (None, None, None)
