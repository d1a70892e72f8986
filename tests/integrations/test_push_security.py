"""Push Security against its loopback fake: key errors, account skills, pagination and the shared rate limit."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes import push
from tests.fakes.fixtures import call_skill, check_connection, context, push_values, run_with_client
from tests.fakes.push import PushFake
from vigil.integrations import runner
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import Endpoints
from vigil.integrations.http import OutboundClient
from vigil.integrations.push_security.client import base_url


def test_connection_lists_one_account_with_key_header(push_fake: PushFake) -> None:
    result = check_connection("push_security", push_values(push_fake), Endpoints())
    assert result.ok and result.status_code == 200
    (request,) = push_fake.requests
    assert (request.method, request.path, request.params) == ("GET", "/v1/accounts", {"limit": "1"})
    assert request.headers["accept"] == "application/json"
    assert request.headers["x-api-key"] == push.READ_KEY


@pytest.mark.parametrize(
    ("status", "cause", "remedy_fragment"),
    [
        (401, "Key incorrect or expired", "Create a new API key"),
        (403, "Permissions insufficient", "permission level"),
        (429, "Rate limit exceeded", "retry"),
        (400, "Incorrect request parameters", "inputs"),
        (500, "Service issue", "Retry later"),
    ],
)
def test_connection_errors_map_to_seed_meanings(
    push_fake: PushFake, status: int, cause: str, remedy_fragment: str
) -> None:
    push_fake.fail_next(3, status=status, body={"message": "injected"}, headers={"Retry-After": "0"})
    result = check_connection("push_security", push_values(push_fake), Endpoints())
    assert (result.ok, result.status_code, result.cause) == (False, status, cause)
    assert remedy_fragment in (result.remedy or "")


def test_expired_key_is_reported_by_the_fake(push_fake: PushFake) -> None:
    result = check_connection("push_security", push_values(push_fake, api_key=push.EXPIRED_KEY), Endpoints())
    assert (result.status_code, result.cause) == (401, "Key incorrect or expired")


def test_domain_field_accepts_host_or_full_base_url() -> None:
    assert base_url(None) == "https://api.pushsecurity.com/v1"
    assert base_url("api.pushsecurity.com") == "https://api.pushsecurity.com/v1"
    assert base_url("https://push.example.com/api/v1/") == "https://push.example.com/api/v1"
    assert base_url("http://127.0.0.1:8123") == "http://127.0.0.1:8123/v1"


def test_list_accounts_sends_filters_and_follows_next_tokens(push_fake: PushFake) -> None:
    output = call_skill(
        "List Accounts",
        push_values(push_fake),
        Endpoints(),
        {"employee_id": push.EMPLOYEE_JOHN, "last_used_after": "2024-03-01T00:00:00Z", "limit": "2"},
    )
    first, second = push_fake.requests
    assert first.params == {"employeeId": push.EMPLOYEE_JOHN, "lastUsedTimestampAfter": "1709251200", "limit": "2"}
    assert second.params["nextToken"] and second.params["limit"] == "2"
    assert [a["app_type"] for a in output["accounts"]] == ["ATLASSIAN", "SLACK", "GITHUB", "NOTION"]
    assert output["next_token"] is None and output["count"] == 4
    account = output["accounts"][0]
    assert account["login_methods"]["oidc_login"] == "GOOGLE_WORKSPACE" and account["mfa_registered"] is True


def test_list_accounts_returns_a_token_when_pages_remain(push_fake: PushFake) -> None:
    output = call_skill("List Accounts", push_values(push_fake), Endpoints(), {"limit": 3, "max_pages": 1})
    assert output["count"] == 3 and output["next_token"]
    rest = call_skill(
        "List Accounts", push_values(push_fake), Endpoints(), {"limit": 3, "next_token": output["next_token"]}
    )
    assert rest["count"] == 4 and rest["next_token"] is None


def test_find_account_by_email_keeps_exact_matches_only(push_fake: PushFake) -> None:
    output = call_skill(
        "Find Account by Email", push_values(push_fake), Endpoints(), {"email": "John.Hill@Example.com"}
    )
    assert push_fake.requests[0].params == {"email": "john.hill@example.com", "limit": "100"}
    assert output["found"] is True
    assert sorted(a["app_type"] for a in output["accounts"]) == ["ATLASSIAN", "GITHUB", "SLACK"]
    missing = call_skill("Find Account by Email", push_values(push_fake), Endpoints(), {"email": "x@example.com"})
    assert missing == {"found": False, "accounts": []}


def test_fifty_calls_never_exceed_ten_in_any_second(push_fake: PushFake) -> None:
    async def body(http: OutboundClient) -> None:
        ctx = context(http, push_values(push_fake), Endpoints(), connection_key="push-conn")
        # Two skills and the connection test share the one limiter of this connection.
        calls = [runner.run_skill("List Accounts", ctx, {"limit": 100}) for _ in range(25)]
        calls += [runner.run_skill("Find Account by Email", ctx, {"email": "ops@example.com"}) for _ in range(20)]
        calls += [runner.test_connection("push_security", ctx) for _ in range(5)]
        await asyncio.gather(*calls)

    run_with_client(body)
    stamps = sorted(r.at for r in push_fake.requests)
    assert len(stamps) == 50
    busiest = max(sum(1 for t in stamps if start <= t < start + 1.0) for start in stamps)
    assert busiest <= 10
    assert all(r.headers["x-api-key"] == push.READ_KEY for r in push_fake.requests)
    assert stamps[-1] - stamps[0] < 6.0  # still close to the allowed 10/s


def test_push_429_without_retry_after_backs_off_and_succeeds(push_fake: PushFake) -> None:
    push_fake.fail_next(status=429, body={"message": "Too many requests"})
    output = call_skill("Find Account by Email", push_values(push_fake), Endpoints(), {"email": "ops@example.com"})
    assert output["found"] is True and len(push_fake.requests) == 2


def test_invalid_email_input_is_rejected() -> None:
    with pytest.raises(IntegrationError) as caught:
        call_skill("Find Account by Email", {"api_key": "k"}, Endpoints(), {"email": "not-an-email"})
    assert caught.value.code == "invalid_skill_input"
