"""Integrations pages: catalog search, connections created in the browser and authenticated against the vendor
fakes, failures shown with cause and remedy, secrets never in the HTML, Skills tab, Slack setup, roles."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.fakes.fixtures import (
    CLOUDFLARE_KEY_VALUES,
    CLOUDFLARE_TOKEN_VALUES,
    MDE_VALUES,
    push_values,
    slack_values,
)
from tests.support.console import DESKTOP, PASSWORD, PHONE, ConsoleStack, screenshot, sign_in
from vigil.auth.schemas import Principal
from vigil.integrations import service
from vigil.integrations.cloudflare import fake as cloudflare
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.models import Connection
from vigil.integrations.push_security import fake as push
from vigil.integrations.schemas import ConnectionCreate
from vigil.integrations.secrets import SecretBox
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack.fake import SlackFake
from vigil.users.schemas import Role

OPERATOR = Principal(actor_uuid=uuid.uuid4(), name="test", all_organizations=True, organization_uuids=frozenset())


def _box(stack: ConsoleStack) -> SecretBox:
    box: SecretBox = stack.app.state.secret_box
    return box


def _add_connection(
    stack: ConsoleStack, org: str, integration_id: str, name: str, values: Mapping[str, str]
) -> uuid.UUID:
    """A connection stored directly through the service (for tests about who sees what)."""
    fields = {k: v for k, v in values.items() if k != "auth_method"}
    payload = ConnectionCreate(
        organization_code=org,
        integration_id=integration_id,
        name=name,
        auth_method=values.get("auth_method"),
        fields=fields,
    )
    with stack.db.write() as session:
        return service.create_connection(session, OPERATOR, payload, _box(stack)).connection_uuid


def _stored(stack: ConsoleStack, connection_uuid: uuid.UUID) -> tuple[Connection, dict[str, str]]:
    with stack.db.read() as session:
        connection = session.get(Connection, connection_uuid)
        assert connection is not None
        session.expunge(connection)
    return connection, service.connection_values(connection, _box(stack))


def _fill_connection_form(page: Page, org: str, name: str, values: Mapping[str, str]) -> None:
    page.locator("#f-organization_code").select_option(org)
    page.get_by_label("Instance name").fill(name)
    method = values.get("auth_method")
    if method is not None:
        page.locator(f'input[name="auth_method"][value="{method}"]').check()
    for field, value in values.items():
        if field != "auth_method":
            page.locator(f"#f-{field}").fill(value)


def _create_in_ui(page: Page, integration_name: str, org: str, name: str, values: Mapping[str, str]) -> str:
    """Integrations → search → integration → Add New Connection → fill → save; returns the connection's URL."""
    page.goto("/integrations")
    page.get_by_role("searchbox").fill(integration_name)
    page.locator("#catalog").get_by_role("link", name=integration_name, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(integration_name)
    page.get_by_role("link", name="Add New Connection").click()
    _fill_connection_form(page, org, name, values)
    page.get_by_role("button", name="Save connection").click()
    expect(page.get_by_role("status").first).to_contain_text("Connection saved")
    expect(page.get_by_role("heading", level=1)).to_contain_text(name)
    return page.url


def _connection_uuid(url: str) -> uuid.UUID:
    match = re.search(r"/connections/([0-9a-f-]{36})", url)
    assert match, url
    return uuid.UUID(match.group(1))


# --- catalog ------------------------------------------------------------------------------------------------------


def test_catalog_search_filters_by_name_id_and_skill_names(admin_page: Page, stack: ConsoleStack) -> None:
    page = admin_page
    stack.add_org("ACME")
    _add_connection(stack, "ACME", "cloudflare", "Cloudflare prod", CLOUDFLARE_TOKEN_VALUES)
    page.goto("/integrations")
    cards = page.locator(".integration-card")
    expect(cards).to_have_count(4)
    cloudflare_card = page.locator('[data-integration="cloudflare"]')
    expect(cloudflare_card).to_contain_text("6 skills")
    expect(cloudflare_card).to_contain_text("1 connection")
    expect(page.locator('[data-integration="microsoft_defender"]')).to_contain_text("0 connections")
    screenshot(page, "integrations-catalog")

    search = page.get_by_role("searchbox")
    search.fill("audit logs")  # skill names: live, through HTMX
    expect(cards).to_have_count(1)
    expect(cloudflare_card).to_contain_text("Matching skills:")
    expect(cloudflare_card).to_contain_text("Get Edge Audit Logs")
    expect(page).to_have_url(re.compile(r"/integrations\?q=audit(\+|%20)logs$"))
    search.fill("push_security")  # id
    expect(cards).to_have_count(1)
    expect(page.locator('[data-integration="push_security"]')).to_be_visible()
    search.fill("SLACK")  # name, any case
    expect(cards).to_have_count(1)
    expect(page.locator('[data-integration="slack"]')).to_be_visible()
    search.fill("no such thing")
    expect(cards).to_have_count(0)
    expect(page.locator("#catalog")).to_contain_text("No integration or skill matches")

    page.goto("/integrations?q=isolate")  # the same search without JavaScript: a plain GET
    expect(cards).to_have_count(1)
    expect(page.locator('[data-integration="microsoft_defender"]')).to_contain_text("Isolate Machine")
    page.set_viewport_size(PHONE)
    page.goto("/integrations")
    screenshot(page, "integrations-catalog-phone")
    box = page.locator('[data-integration="push_security"]').bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]


# --- creating and authenticating each integration --------------------------------------------------------------

CASES: dict[str, tuple[str, str, Callable[[pytest.FixtureRequest], Mapping[str, str]]]] = {
    "defender": ("Microsoft Defender for Endpoint", "microsoft_defender", lambda _r: MDE_VALUES),
    "cloudflare-api-token": ("Cloudflare", "cloudflare", lambda _r: CLOUDFLARE_TOKEN_VALUES),
    "cloudflare-global-key": ("Cloudflare", "cloudflare", lambda _r: CLOUDFLARE_KEY_VALUES),
    "slack": ("Slack", "slack", lambda r: slack_values(r.getfixturevalue("slack_fake"))),
    "push": ("Push Security", "push_security", lambda r: push_values(r.getfixturevalue("push_fake"))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_connection_created_in_the_console_authenticates_against_the_vendor(
    case: str,
    request: pytest.FixtureRequest,
    admin_page: Page,
    stack: ConsoleStack,
    mde_fake: MdeFake,
    cloudflare_fake: CloudflareFake,
) -> None:
    page = admin_page
    integration_name, integration_id, values_for = CASES[case]
    values = values_for(request)
    stack.add_org("ACME", "Acme Corp")
    url = _create_in_ui(page, integration_name, "ACME", f"{case} prod", values)
    expect(page.locator(".test-result")).to_contain_text("Not tested")

    page.get_by_role("button", name=f"Authenticate {case} prod").click()
    result = page.locator(".test-box .test-result")
    expect(result).to_contain_text("Authenticated")
    expect(result).not_to_contain_text("Cause:")

    connection, stored = _stored(stack, _connection_uuid(url))
    assert connection.last_test_ok is True and connection.integration_id == integration_id
    assert {k: stored[k] for k in values} == dict(values)  # what the form sent is what the test used
    for name, value in values.items():
        if name in service.get_integration(integration_id).secret_field_names():
            assert value not in page.content()
    if case == "defender":
        assert mde_fake.requests_to("/oauth2/v2.0/token", "POST")
    if case.startswith("cloudflare"):
        expected = "/user/tokens/verify" if case.endswith("token") else "/audit_logs"
        assert cloudflare_fake.requests_to(expected)

    page.goto(f"/integrations/{integration_id}")
    row = page.locator("tr", has_text=f"{case} prod")
    expect(row).to_contain_text("ACME")
    expect(row.locator(".test-result")).to_contain_text("Authenticated")


def test_failed_authentication_shows_cause_and_remedy(
    admin_page: Page, stack: ConsoleStack, mde_fake: MdeFake, cloudflare_fake: CloudflareFake
) -> None:
    page = admin_page
    stack.add_org("ACME")
    wrong = {**MDE_VALUES, "client_secret": "Wr0ng~secret.value_that-is-not-right"}
    _create_in_ui(page, "Microsoft Defender for Endpoint", "ACME", "Defender prod", wrong)
    page.get_by_role("button", name="Authenticate Defender prod").click()
    result = page.locator(".test-box .test-result")
    expect(result).to_contain_text("Failed")
    expect(result).to_contain_text("Cause: Invalid client secret")
    expect(result.locator(".remedy")).to_contain_text(re.compile(r"^Remedy: .*Value", re.S))

    # The same failure with the seed's Cloudflare causes: a revoked API token, tested from the list (HTMX).
    bad_token = {**CLOUDFLARE_TOKEN_VALUES, "api_token": "Zz9" + cloudflare.USER_TOKEN[3:]}
    _add_connection(stack, "ACME", "cloudflare", "Cloudflare prod", bad_token)
    page.goto("/integrations/cloudflare")
    row = page.locator("tr", has_text="Cloudflare prod")
    row.get_by_role("button", name="Authenticate Cloudflare prod").click()
    expect(row.locator(".test-result")).to_contain_text(
        "Cause: Invalid API Token: token expired, revoked, or missing scope"
    )
    expect(row.locator(".test-result .remedy")).to_contain_text("Remedy:")

    # The stored result survives a reload; the list shows it next to a new-connection form.
    page.goto("/integrations/microsoft_defender/connections/new")
    row = page.locator("tr", has_text="Defender prod")
    expect(row).to_contain_text("Cause: Invalid client secret")
    expect(row).to_contain_text("Remedy:")
    expect(page.locator("#connection-form")).to_be_visible()
    screenshot(page, "integrations-connections-form-failed-test")
    page.set_viewport_size(PHONE)
    page.reload()
    screenshot(page, "integrations-connections-form-failed-test-phone")
    form_box = page.locator("#connection-form").bounding_box()
    assert form_box is not None and form_box["x"] + form_box["width"] <= PHONE["width"]


def test_validation_errors_keep_entered_values_but_not_secrets(
    admin_page: Page, stack: ConsoleStack, cloudflare_fake: CloudflareFake
) -> None:
    page = admin_page
    stack.add_org("ACME")
    _add_connection(stack, "ACME", "cloudflare", "Cloudflare prod", CLOUDFLARE_TOKEN_VALUES)
    page.goto("/integrations/cloudflare/connections/new")
    # Global key chosen: the API Token field hides and the email/key fields show.
    expect(page.locator("#f-api_token")).to_be_visible()
    page.locator('input[name="auth_method"][value="global_key"]').check()
    expect(page.locator("#f-api_token")).to_be_hidden()
    expect(page.locator("#f-email")).to_be_visible()
    _fill_connection_form(
        page,
        "ACME",
        "Cloudflare legacy",
        {"global_api_key": cloudflare.GLOBAL_KEY, "account_id": cloudflare.ACCOUNT_ID},
    )
    page.get_by_role("button", name="Save connection").click()
    expect(page.locator('[data-error-for="email"]')).to_have_text("Authentication Email is required.")
    expect(page.locator("[data-form-error]")).to_be_visible()
    expect(page.get_by_label("Instance name")).to_have_value("Cloudflare legacy")
    expect(page.locator("#f-account_id")).to_have_value(cloudflare.ACCOUNT_ID)
    expect(page.locator('input[name="auth_method"][value="global_key"]')).to_be_checked()
    assert cloudflare.GLOBAL_KEY not in page.content()
    expect(page.locator("#f-global_api_key")).to_have_value("")
    screenshot(page, "integrations-cloudflare-form-error")

    # A name the organization already uses is refused next to the name field.
    page.locator("#f-email").fill(cloudflare.EMAIL)
    page.locator("#f-global_api_key").fill(cloudflare.GLOBAL_KEY)
    page.get_by_label("Instance name").fill("Cloudflare prod")
    page.get_by_role("button", name="Save connection").click()
    expect(page.locator('[data-error-for="name"]')).to_contain_text("already has a connection named")
    expect(page.locator("#f-email")).to_have_value(cloudflare.EMAIL)
    page.get_by_label("Instance name").fill("Cloudflare legacy")
    page.locator("#f-global_api_key").fill(cloudflare.GLOBAL_KEY)
    page.get_by_role("button", name="Save connection").click()
    expect(page.get_by_role("status").first).to_contain_text("Connection saved")
    _connection, stored = _stored(stack, _connection_uuid(page.url))
    assert stored["email"] == cloudflare.EMAIL and stored["auth_method"] == "global_key"
    assert "api_token" not in stored


def test_edit_keeps_blank_secrets_and_never_shows_them(
    admin_page: Page, stack: ConsoleStack, mde_fake: MdeFake
) -> None:
    page = admin_page
    stack.add_org("ACME")
    connection_uuid = _add_connection(stack, "ACME", "microsoft_defender", "Defender prod", MDE_VALUES)
    page.goto(f"/integrations/microsoft_defender/connections/{connection_uuid}")
    assert mde.CLIENT_SECRET not in page.content()
    expect(page.locator(".facts")).to_contain_text("••••" + mde.CLIENT_SECRET[-4:])

    page.get_by_role("link", name="Edit", exact=True).click()
    secret_input = page.locator("#f-client_secret")
    expect(secret_input).to_have_attribute("type", "password")
    expect(secret_input).to_have_attribute("autocomplete", "new-password")
    expect(secret_input).to_have_value("")
    expect(page.locator("#f-client_secret-help")).to_contain_text("••••" + mde.CLIENT_SECRET[-4:])
    expect(page.locator("#f-tenant_id")).to_have_value(mde.TENANT_ID)
    assert mde.CLIENT_SECRET not in page.content()
    page.get_by_label("Description").fill("Tenant of the Acme SOC")
    page.get_by_label("Expiry").fill("2099-06-30")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").first).to_contain_text("Changes saved")
    assert mde.CLIENT_SECRET not in page.content()

    connection, stored = _stored(stack, connection_uuid)
    assert stored["client_secret"] == mde.CLIENT_SECRET
    assert connection.description == "Tenant of the Acme SOC"
    assert connection.expires_at == 4086460800  # 2099-06-30T00:00:00Z
    page.get_by_role("button", name="Authenticate Defender prod").click()
    expect(page.locator(".test-box .test-result")).to_contain_text("Authenticated")

    # A new secret replaces the stored one; it is not echoed either.
    page.get_by_role("link", name="Edit", exact=True).click()
    page.locator("#f-client_secret").fill("N3w~client.secret_value-0000000000wxyz")
    page.get_by_role("button", name="Save changes").click()
    expect(page.locator(".facts")).to_contain_text("••••wxyz")
    assert "N3w~client.secret_value" not in page.content()
    assert _stored(stack, connection_uuid)[1]["client_secret"] == "N3w~client.secret_value-0000000000wxyz"


def test_edit_switches_cloudflare_to_the_global_key_method(
    admin_page: Page, stack: ConsoleStack, cloudflare_fake: CloudflareFake
) -> None:
    page = admin_page
    stack.add_org("ACME")
    connection_uuid = _add_connection(stack, "ACME", "cloudflare", "Cloudflare prod", CLOUDFLARE_TOKEN_VALUES)
    page.goto(f"/integrations/cloudflare/connections/{connection_uuid}/edit")
    expect(page.locator('input[name="auth_method"][value="api_token"]')).to_be_checked()
    expect(page.locator("#f-api_token-help")).to_contain_text("••••" + cloudflare.USER_TOKEN[-4:])
    page.locator('input[name="auth_method"][value="global_key"]').check()
    expect(page.locator("#f-api_token")).to_be_hidden()
    page.locator("#f-email").fill(cloudflare.EMAIL)
    page.locator("#f-global_api_key").fill(cloudflare.GLOBAL_KEY)
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status").first).to_contain_text("Changes saved")
    expect(page.locator(".facts")).to_contain_text("Authentication Email + Global API Key")
    expect(page.locator(".facts")).not_to_contain_text("API Token ••••")
    page.get_by_role("button", name="Authenticate Cloudflare prod").click()
    expect(page.locator(".test-box .test-result")).to_contain_text("Global API Key accepted")
    connection, stored = _stored(stack, connection_uuid)
    assert connection.auth_method == "global_key" and "api_token" not in stored
    assert stored["global_api_key"] == cloudflare.GLOBAL_KEY and stored["account_id"] == cloudflare.ACCOUNT_ID


def test_delete_asks_for_confirmation(admin_page: Page, stack: ConsoleStack) -> None:
    page = admin_page
    stack.add_org("ACME")
    connection_uuid = _add_connection(stack, "ACME", "push_security", "Push prod", {"api_key": push.READ_KEY})
    page.goto(f"/integrations/push_security/connections/{connection_uuid}")
    confirm = page.get_by_role("button", name="Yes, delete “Push prod”")
    expect(confirm).to_be_hidden()
    page.get_by_text("Delete connection…").click()
    confirm.click()
    expect(page).to_have_url(re.compile(r"/integrations/push_security\?done=deleted$"))
    expect(page.get_by_role("status").first).to_have_text("Connection deleted.")
    expect(page.locator("table.connections")).to_have_count(0)
    with stack.db.read() as session:
        assert session.get(Connection, connection_uuid) is None


# --- skills ------------------------------------------------------------------------------------------------------


def test_skills_tab_lists_typed_inputs_and_outputs(admin_page: Page, stack: ConsoleStack) -> None:
    page = admin_page
    page.goto("/integrations/microsoft_defender")
    page.get_by_role("link", name=re.compile(r"^Skills")).click()
    expect(page).to_have_url(re.compile(r"/integrations/microsoft_defender/skills$"))
    machines = page.locator("article.skill", has=page.get_by_role("heading", name="List Machines", exact=True))
    expect(machines).to_contain_text("Machine.Read.All (or Machine.ReadWrite.All)")
    expect(machines.locator(".read-badge")).to_have_text("Read only")
    inputs = machines.get_by_role("table", name="List Machines input parameters")
    top = inputs.locator("tr", has=page.locator("code", has_text=re.compile(r"^top$")))
    expect(top.locator("td").nth(1)).to_have_text("integer")
    expect(top.locator("td").nth(2)).to_have_text("optional")
    expect(top.locator("td").nth(3)).to_contain_text("Maximum number of machines to return.")
    expect(top.locator("td").nth(3)).to_contain_text("1 to 10000 · default 50")
    ip = inputs.locator("tr", has=page.locator("code", has_text=re.compile(r"^ip$")))
    expect(ip.locator("td").nth(1)).to_have_text("string (IP address)")
    outputs = machines.get_by_role("table", name="List Machines output parameters")
    expect(outputs.locator("tr", has_text="machines").locator("td").nth(1)).to_have_text("Machine[]")
    machines.get_by_text("Output types: Machine, IpAddress").click()
    machine_table = machines.get_by_role("table", name="Machine", exact=True)
    tags = machine_table.locator("tr", has=page.locator("code", has_text=re.compile(r"^machine_tags$")))
    expect(tags.locator("td").nth(1)).to_have_text("array of string")

    isolate = page.locator("article.skill", has=page.get_by_role("heading", name="Isolate Machine"))
    expect(isolate.locator(".write-badge")).to_contain_text("Write action")
    isolation = isolate.locator("tr", has=page.locator("code", has_text=re.compile(r"^isolation_type$")))
    expect(isolation).to_contain_text("One of: Full Selective")
    expect(isolation).to_contain_text("default Full")
    comment = isolate.locator("tr", has=page.locator("code", has_text=re.compile(r"^comment$")))
    expect(comment.locator("td").nth(2)).to_have_text("required")
    screenshot(page, "integrations-skills")

    page.goto("/integrations/cloudflare/skills")
    detections = page.locator(
        "article.skill", has=page.get_by_role("heading", name="Edge Get Account Audit Logs for Detections")
    )
    actor_ip = detections.locator("tr", has=page.locator("code", has_text=re.compile(r"^actor_ip$")))
    expect(actor_ip.locator("td").nth(1)).to_have_text("string (IP network)")
    entries = detections.locator("tr", has=page.locator("code", has_text=re.compile(r"^entries$")))
    expect(entries.locator("td").nth(1)).to_have_text("AuditLogEntry[]")
    expect(page.locator(".write-badge")).to_have_count(1)  # Create Edge Ruleset Rule
    page.set_viewport_size(PHONE)
    page.reload()
    screenshot(page, "integrations-skills-phone")


# --- Slack --------------------------------------------------------------------------------------------------------


def test_slack_connection_shows_chat_urls_and_manifest(
    browser: Browser, stack: ConsoleStack, slack_fake: SlackFake
) -> None:
    context = browser.new_context(viewport=DESKTOP, base_url=stack.url)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=stack.url)
    page = context.new_page()
    try:
        sign_in(page, stack.url)
        stack.add_org("ACME")
        url = _create_in_ui(page, "Slack", "ACME", "Slack SOC", slack_values(slack_fake))
        expect(page.get_by_role("status").first).to_contain_text("complete the Slack setup")
        connection, _values = _stored(stack, _connection_uuid(url))
        token = connection.webhook_token
        events_url = f"{stack.url}/serviceapi/webhooks/chat/v1/events?token={token}"
        interactions_url = f"{stack.url}/serviceapi/webhooks/chat/v1/interactions?token={token}"
        expect(page.locator("#chat-events-url")).to_have_text(events_url)
        expect(page.locator("#chat-interactions-url")).to_have_text(interactions_url)
        manifest_json = page.locator("#manifest-json")
        expect(manifest_json).to_contain_text(f'"request_url": "{events_url}"')
        expect(manifest_json).to_contain_text('"message.im"')
        expect(page.locator("#manifest-yaml")).to_contain_text(f'request_url: "{interactions_url}"')
        expect(page.locator(".connection-setup")).to_contain_text("Authenticate to complete the setup")
        assert slack.BOT_TOKEN not in page.content() and slack.SIGNING_SECRET not in page.content()

        page.get_by_role("button", name="Copy", exact=True).first.click()
        assert page.evaluate("navigator.clipboard.readText()") == events_url
        page.get_by_role("button", name="Copy YAML").click()
        assert page.evaluate("navigator.clipboard.readText()").startswith("_metadata:")

        page.get_by_role("button", name="Authenticate Slack SOC").click()
        expect(page.locator(".test-box .test-result")).to_contain_text("Authenticated")
        screenshot(page, "integrations-slack-connection")
        page.set_viewport_size(PHONE)
        page.reload()
        screenshot(page, "integrations-slack-connection-phone")
        copy_box = page.get_by_role("button", name="Copy JSON").bounding_box()
        assert copy_box is not None and copy_box["x"] + copy_box["width"] <= PHONE["width"]
        page.set_viewport_size(DESKTOP)

        page.get_by_text("Rotate webhook token…").click()
        page.get_by_role("button", name="Yes, rotate the webhook token").click()
        expect(page.get_by_role("status").first).to_contain_text("New webhook token issued")
        rotated, _values = _stored(stack, connection.connection_uuid)
        assert rotated.webhook_token != token
        expect(page.locator("#chat-events-url")).to_contain_text(f"token={rotated.webhook_token}")
        assert token not in page.content()
    finally:
        context.close()


# --- roles and tenancy --------------------------------------------------------------------------------------------


def test_analyst_sees_and_creates_only_in_their_organizations(page: Page, stack: ConsoleStack) -> None:
    stack.add_org("ORGA")
    stack.add_org("ORGB")
    _add_connection(stack, "ORGA", "push_security", "Push A", {"api_key": push.READ_KEY})
    other = _add_connection(stack, "ORGB", "push_security", "Push B", {"api_key": push.FULL_KEY})
    stack.add_user("analyst@orga.test", Role.ANALYST, "ORGA")
    sign_in(page, stack.url, "analyst@orga.test", PASSWORD)

    page.goto("/integrations")
    expect(page.locator('[data-integration="push_security"]')).to_contain_text("1 connection")
    page.goto("/integrations/push_security")
    expect(page.locator("table.connections tbody tr")).to_have_count(1)
    expect(page.locator("table.connections")).to_contain_text("Push A")
    expect(page.locator("table.connections")).not_to_contain_text("Push B")
    page.get_by_role("link", name="Add New Connection").click()
    options = page.locator("#f-organization_code option")
    expect(options).to_have_count(1)
    expect(options).to_have_text(re.compile(r"^ORGA"))

    response = page.goto(f"/integrations/push_security/connections/{other}")
    assert response is not None and response.status == 404  # another tenant's connection is simply not found
    assert "Push B" not in page.content()

    # A forged form for the other organization is refused by the service's tenant check.
    page.goto("/integrations/push_security/connections/new")
    page.locator("#f-organization_code").evaluate("s => { s.options[0].value = 'ORGB'; }")
    page.get_by_label("Instance name").fill("Sneaky")
    page.locator("#f-api_key").fill(push.READ_KEY)
    page.get_by_role("button", name="Save connection").click()
    expect(page.locator("[data-form-error]")).to_be_visible()
    expect(page.locator("#connection-form")).to_contain_text("You cannot create connections for this organization.")
    with stack.db.read() as session:
        names = [c.name for c, _code in service.list_connections(session, OPERATOR)]
    assert "Sneaky" not in names


def test_viewer_sees_connections_and_skills_but_cannot_change_them(page: Page, stack: ConsoleStack) -> None:
    stack.add_org("ORGA")
    connection_uuid = _add_connection(stack, "ORGA", "push_security", "Push A", {"api_key": push.READ_KEY})
    stack.add_user("viewer@orga.test", Role.VIEWER, "ORGA")
    sign_in(page, stack.url, "viewer@orga.test", PASSWORD)

    page.goto("/integrations/push_security")
    expect(page.locator("table.connections")).to_contain_text("Push A")
    expect(page.get_by_role("link", name="Add New Connection")).to_have_count(0)
    expect(page.get_by_role("button", name=re.compile("Authenticate"))).to_have_count(0)
    expect(page.get_by_role("link", name=re.compile("^Edit"))).to_have_count(0)
    page.goto(f"/integrations/push_security/connections/{connection_uuid}")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Push A")
    expect(page.get_by_role("button", name=re.compile("Authenticate|Delete|Rotate"))).to_have_count(0)
    expect(page.get_by_text("Delete connection…")).to_have_count(0)
    expect(page.get_by_role("link", name="Edit", exact=True)).to_have_count(0)
    page.goto("/integrations/push_security/skills")
    expect(page.get_by_role("heading", name="Find Account by Email")).to_be_visible()

    refused = page.goto("/integrations/push_security/connections/new")
    assert refused is not None and refused.status == 403
    token = page.locator('input[name="csrf_token"]').first.get_attribute("value")
    assert token
    base = f"/integrations/push_security/connections/{connection_uuid}"
    for path in ("/integrations/push_security/connections", f"{base}/test", f"{base}/delete", f"{base}/edit"):
        answer = page.request.post(path, form={"csrf_token": token, "name": "x"}, max_redirects=0)
        assert answer.status == 403, path
    with stack.db.read() as session:
        assert session.get(Connection, connection_uuid) is not None
