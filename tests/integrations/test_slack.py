"""Slack against its loopback fake: auth.test mapping, webhook delivery and errors, Web API client methods."""

from __future__ import annotations

import time

import pytest

from tests.fakes.fixtures import call_skill, check_connection, context, endpoints, run_with_client, slack_values
from vigil.integrations.errors import IntegrationError
from vigil.integrations.http import OutboundClient
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack.client import SlackWebClient
from vigil.integrations.slack.fake import SlackFake


def test_connection_calls_auth_test_with_the_bot_token(slack_fake: SlackFake) -> None:
    result = check_connection("slack", slack_values(slack_fake), endpoints(slack_fake=slack_fake))
    assert result.ok and result.detail == "Authenticated as bot in workspace Subarachnoid Workspace."
    (request,) = slack_fake.requests
    assert (request.method, request.path) == ("POST", "/api/auth.test")
    assert request.headers["authorization"] == f"Bearer {slack.BOT_TOKEN}"


@pytest.mark.parametrize(
    ("token", "injected", "cause"),
    [
        ("xoxb-1-2-wrongwrongwrong", None, "Invalid bot token"),
        (slack.REVOKED_TOKEN, None, "Token revoked"),
        (slack.BOT_TOKEN, "account_inactive", "Bot user or workspace deactivated"),
        (slack.BOT_TOKEN, "not_authed", "No token sent"),
        (slack.BOT_TOKEN, "missing_scope", "Missing OAuth scope"),
    ],
)
def test_auth_test_errors_map_to_causes(slack_fake: SlackFake, token: str, injected: str | None, cause: str) -> None:
    if injected:
        slack_fake.fail_next(status=200, body={"ok": False, "error": injected})
    values = {**slack_values(slack_fake), "bot_token": token}
    result = check_connection("slack", values, endpoints(slack_fake=slack_fake))
    assert (result.ok, result.cause) == (False, cause)
    assert result.remedy


def test_invalid_auth_remedy_points_at_the_bot_token(slack_fake: SlackFake) -> None:
    values = {**slack_values(slack_fake), "bot_token": "xoxb-0-0-nope"}
    result = check_connection("slack", values, endpoints(slack_fake=slack_fake))
    assert "Bot User OAuth Token" in (result.remedy or "")
    assert result.detail == "Slack auth.test failed: invalid_auth"


def test_user_token_is_rejected_before_any_call(slack_fake: SlackFake) -> None:
    values = {**slack_values(slack_fake), "bot_token": "xoxp-123-456"}
    result = check_connection("slack", values, endpoints(slack_fake=slack_fake))
    assert result.ok is False and "Bot User OAuth Token has the wrong format." in (result.remedy or "")
    assert slack_fake.requests == []


def test_send_chat_message_posts_json_to_the_webhook(slack_fake: SlackFake) -> None:
    output = call_skill(
        "Send Chat Message",
        slack_values(slack_fake),
        endpoints(slack_fake=slack_fake),
        {"text": "*ACME-1*: suspicious sign-in"},
    )
    assert output == {"delivered": True, "channel": "#soc-alerts"}
    (request,) = slack_fake.requests
    assert (request.method, request.path) == ("POST", slack.WEBHOOK_PATH)
    assert request.headers["content-type"] == "application/json"
    assert request.json() == {"text": "*ACME-1*: suspicious sign-in"}
    assert "authorization" not in request.headers


@pytest.mark.parametrize(
    ("status", "code", "cause", "transient"),
    [
        (400, "invalid_payload", "Invalid message payload", False),
        (403, "action_prohibited", "Posting prohibited by a workspace admin", False),
        (404, "channel_not_found", "Webhook channel not found", False),
        (410, "channel_is_archived", "Webhook channel archived", False),
        (404, "no_service", "Webhook disabled or revoked", False),
        (500, "rollup_error", "Service issue", True),
    ],
)
def test_webhook_errors_map_to_causes(
    slack_fake: SlackFake, status: int, code: str, cause: str, transient: bool
) -> None:
    slack_fake.fail_next(status=status, body=code, plain_text=True)
    with pytest.raises(IntegrationError) as caught:
        call_skill("Send Chat Message", slack_values(slack_fake), endpoints(slack_fake=slack_fake), {"text": "x"})
    assert (caught.value.status_code, caught.value.cause, caught.value.transient) == (status, cause, transient)
    assert len(slack_fake.requests) == 1  # a POST that may have been processed is never repeated


def test_wrong_webhook_url_and_archived_channel_come_from_the_fake(slack_fake: SlackFake) -> None:
    values = {**slack_values(slack_fake), "webhook_url": slack_fake.url + "/services/T0G9PQBBK/B0123ABCD/wrong"}
    with pytest.raises(IntegrationError) as caught:
        call_skill("Send Chat Message", values, endpoints(slack_fake=slack_fake), {"text": "x"})
    assert caught.value.code == "invalid_token"
    slack_fake.webhook_archived = True
    with pytest.raises(IntegrationError) as archived:
        call_skill("Send Chat Message", slack_values(slack_fake), endpoints(slack_fake=slack_fake), {"text": "x"})
    assert archived.value.status_code == 410


def test_webhook_429_waits_for_retry_after_then_delivers(slack_fake: SlackFake) -> None:
    slack_fake.fail_next(status=429, body="rate_limited", plain_text=True, headers={"Retry-After": "1"})
    started = time.monotonic()
    output = call_skill("Send Chat Message", slack_values(slack_fake), endpoints(slack_fake=slack_fake), {"text": "x"})
    assert output["delivered"] is True
    first, second = slack_fake.requests
    assert second.at - first.at >= 1.0 and time.monotonic() - started >= 1.0
    assert slack_fake.webhook_messages == [{"text": "x"}]


def test_web_api_methods_for_the_chat_checkpoint(slack_fake: SlackFake) -> None:
    async def body(http: OutboundClient) -> tuple[str, str, str, str]:
        client = SlackWebClient(context(http, slack_values(slack_fake), endpoints(slack_fake=slack_fake)))
        user = await client.users_lookup_by_email("spengler@ghostbusters.example.com")
        channel = await client.conversations_open(user.id)
        blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "Was this you?"}}]
        posted = await client.chat_post_message(channel, "Was this you?", blocks=blocks)
        updated = await client.chat_update(posted.channel, posted.ts, "Thanks, confirmed.")
        return user.id, channel, posted.ts, updated.ts

    user_id, channel, ts, updated_ts = run_with_client(body)
    assert (user_id, channel, updated_ts) == ("W012A3CDE", "D069C7QFK", ts)
    lookup, opened, post, update = slack_fake.requests
    assert (lookup.method, lookup.path, lookup.params) == (
        "GET",
        "/api/users.lookupByEmail",
        {"email": "spengler@ghostbusters.example.com"},
    )
    assert opened.json() == {"users": "W012A3CDE"}
    assert post.json()["blocks"][0]["type"] == "section" and post.json()["channel"] == "D069C7QFK"
    assert post.headers["content-type"] == "application/json; charset=utf-8"
    assert update.json() == {"channel": "D069C7QFK", "ts": ts, "text": "Thanks, confirmed."}
    assert all(r.headers["authorization"] == f"Bearer {slack.BOT_TOKEN}" for r in slack_fake.requests)


def test_web_api_ok_false_and_exhausted_429_are_typed(slack_fake: SlackFake) -> None:
    async def lookup(http: OutboundClient) -> object:
        client = SlackWebClient(context(http, slack_values(slack_fake), endpoints(slack_fake=slack_fake)))
        return await client.users_lookup_by_email("nobody@example.com")

    with pytest.raises(IntegrationError) as missing:
        run_with_client(lookup)
    assert (missing.value.code, missing.value.transient) == ("user_not_found", False)

    slack_fake.fail_next(3, status=429, body={"ok": False, "error": "ratelimited"}, headers={"Retry-After": "0"})
    with pytest.raises(IntegrationError) as limited:
        run_with_client(lookup)
    assert (limited.value.code, limited.value.transient, limited.value.status_code) == ("rate_limited", True, 429)
