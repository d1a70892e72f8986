"""Push Security against its loopback fake: key errors, account and findings skills, pagination and the shared
rate limit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.fakes.fixtures import call_skill, check_connection, context, push_values, run_with_client
from vigil.integrations import runner
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import Endpoints
from vigil.integrations.http import OutboundClient
from vigil.integrations.push_security import fake as push
from vigil.integrations.push_security import skills as push_skills
from vigil.integrations.push_security.client import base_url
from vigil.integrations.push_security.fake import PushFake


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


@pytest.mark.serial
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


# --- Get Security Findings by Email ---------------------------------------------------------------------------

FINDING_KEYS = {
    "id",
    "type",
    "state",
    "app_type",
    "account_id",
    "employee_id",
    "weak_password_reasons",
    "creation_timestamp",
}
DETECTION_KEYS = {"id", "detection_type", "severity", "response", "archived", "creation_timestamp"}


def _ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["id"][-2:] for r in records]


def test_findings_and_detections_of_a_user_are_collected_across_pages(push_fake: PushFake) -> None:
    push_fake.page_size_cap = 2
    output = call_skill(
        "Get Security Findings by Email", push_values(push_fake), Endpoints(), {"email": "John.Hill@Example.com"}
    )
    assert output["email"] == "john.hill@example.com" and output["accounts"] == 3 and output["complete"] is True
    # Open findings of John's employee record or accounts, newest first: the unlinked weak password (10) reaches
    # him through his ATLASSIAN account, the NOTION reuse (3) through his employee id; resolved 4 is left out.
    assert _ids(output["findings"]) == ["08", "10", "02", "01", "03", "09"]
    assert [(f["type"], f["app_type"]) for f in output["findings"][:2]] == [
        ("STOLEN_CREDENTIALS", "SLACK"),
        ("WEAK_PASSWORD", "ATLASSIAN"),
    ]
    assert output["findings"][1]["weak_password_reasons"] == ["COMMON_PASSWORD"]
    assert output["findings"][1]["employee_id"] is None
    assert all(set(f) == FINDING_KEYS for f in output["findings"])
    assert _ids(output["detections"]) == ["01", "03"]
    critical = output["detections"][0]
    assert (critical["detection_type"], critical["severity"], critical["archived"]) == ("PHISHING", "CRITICAL", False)
    assert all(set(d) == DETECTION_KEYS for d in output["detections"])

    # Every list was read to its end, page by page, with the key and the paging token of the previous page.
    assert all(r.method == "GET" and r.headers["x-api-key"] == push.READ_KEY for r in push_fake.requests)
    for path, pages in (("/v1/accounts", 2), ("/v1/findings", 5), ("/v1/detections", 3)):
        requests = push_fake.requests_to(path)
        assert len(requests) == pages, path
        assert "nextToken" not in requests[0].params and all(r.params.get("nextToken") for r in requests[1:])
    assert push_fake.requests_to("/v1/accounts")[0].params == {"email": "john.hill@example.com", "limit": "100"}
    assert push_fake.requests_to("/v1/findings")[0].params == {"limit": "100"}


def test_another_users_findings_and_detections_are_never_returned(push_fake: PushFake) -> None:
    """Push's email filter is partial: a look-alike address of another employee must not leak in."""
    other_employee = "9d9d9d9d-1111-4222-8333-444444444444"
    lookalike = {**push.ACCOUNTS[5], "id": "acc-lookalike", "employeeId": other_employee}
    lookalike["email"] = "john.hill@example.com.evil.io"
    push_fake.accounts = [push.ACCOUNTS[0], lookalike]
    push_fake.findings = [
        {**push.FINDINGS[0], "id": "f-john", "employeeId": push.EMPLOYEE_JOHN, "accountId": push.ACCOUNTS[0]["id"]},
        {**push.FINDINGS[1], "id": "f-other-employee", "employeeId": other_employee, "accountId": None},
        {**push.FINDINGS[2], "id": "f-other-account", "employeeId": None, "accountId": "acc-lookalike"},
    ]
    other = {**push.EMPLOYEES[push.EMPLOYEE_JOHN], "id": other_employee, "email": "JOHN.HILL@example.com.evil.io"}
    push_fake.detections = [
        {**push.DETECTIONS[0], "id": "d-john", "employee": {**push.EMPLOYEES[push.EMPLOYEE_JOHN]}},
        {**push.DETECTIONS[2], "id": "d-other", "employeeId": other_employee, "employee": other},
        {**push.DETECTIONS[1], "id": "d-no-employee", "employee": None},
    ]
    output = call_skill(
        "Get Security Findings by Email", push_values(push_fake), Endpoints(), {"email": "john.hill@example.com"}
    )
    assert output["accounts"] == 1
    assert [f["id"] for f in output["findings"]] == ["f-john"]
    assert [d["id"] for d in output["detections"]] == ["d-john"]


def test_resolved_findings_and_archived_detections_only_on_request(push_fake: PushFake) -> None:
    default = call_skill(
        "Get Security Findings by Email", push_values(push_fake), Endpoints(), {"email": "john.hill@example.com"}
    )
    assert {f["state"] for f in default["findings"]} == {"OPEN"}
    assert {d["archived"] for d in default["detections"]} == {False}
    everything = call_skill(
        "Get Security Findings by Email",
        push_values(push_fake),
        Endpoints(),
        {"email": "john.hill@example.com", "include_resolved": "true"},  # as a playbook template renders it
    )
    assert set(_ids(everything["findings"])) - set(_ids(default["findings"])) == {"04"}
    assert set(_ids(everything["detections"])) - set(_ids(default["detections"])) == {"04"}
    resolved = next(f for f in everything["findings"] if f["state"] == "RESOLVED")
    assert resolved["weak_password_reasons"] == ["TOO_SHORT", "NO_SPECIAL_CHARACTERS"]


def test_user_without_accounts_still_gets_detections_and_no_findings_scan(push_fake: PushFake) -> None:
    hire = {"id": "7e7e7e7e-0000-4000-8000-000000000001", "email": "new.hire@example.com"}
    push_fake.detections.append({**push.DETECTIONS[0], "id": "d-new-hire", "employeeId": hire["id"], "employee": hire})
    output = call_skill(
        "Get Security Findings by Email", push_values(push_fake), Endpoints(), {"email": "new.hire@example.com"}
    )
    assert (output["accounts"], output["findings"]) == (0, [])
    assert [d["id"] for d in output["detections"]] == ["d-new-hire"]
    assert push_fake.requests_to("/v1/findings") == []


def test_findings_page_cap_is_reported_as_incomplete(push_fake: PushFake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(push_skills, "_SCAN_MAX_PAGES", 2)
    push_fake.page_size_cap = 2
    output = call_skill(
        "Get Security Findings by Email", push_values(push_fake), Endpoints(), {"email": "john.hill@example.com"}
    )
    assert output["complete"] is False
    assert len(push_fake.requests_to("/v1/findings")) == 2


@pytest.mark.parametrize("api_key", [push.EXPIRED_KEY, "psk_read_not_a_key"])
def test_findings_with_a_bad_key_raise_the_push_key_error(push_fake: PushFake, api_key: str) -> None:
    with pytest.raises(IntegrationError) as caught:
        call_skill(
            "Get Security Findings by Email",
            push_values(push_fake, api_key=api_key),
            Endpoints(),
            {"email": "john.hill@example.com"},
        )
    error = caught.value
    assert (error.code, error.status_code, error.cause, error.transient) == (
        "invalid_api_key",
        401,
        "Key incorrect or expired",
        False,
    )
    assert api_key not in error.message


def test_findings_429_is_retried_by_the_shared_retry(push_fake: PushFake) -> None:
    push_fake.fail_next(status=429, body={"message": "Too many requests"}, path_contains="/v1/findings")
    push_fake.fail_next(status=429, body={"message": "Too many requests"}, path_contains="/v1/detections")
    output = call_skill(
        "Get Security Findings by Email", push_values(push_fake), Endpoints(), {"email": "jane.doe@example.com"}
    )
    assert len(push_fake.requests_to("/v1/findings")) == 2 and len(push_fake.requests_to("/v1/detections")) == 2
    # Jane's employee record also owns the shared ops@ AWS account, so its finding is hers too.
    assert [(f["type"], f["app_type"]) for f in output["findings"]] == [
        ("SHARED_ACCOUNT", "AWS"),
        ("LEAKED_PASSWORD", "ATLASSIAN"),
    ]
    assert [(d["detection_type"], d["severity"]) for d in output["detections"]] == [
        ("PHISHING", "LOW"),
        ("BLOCKED_URL", "LOW"),
    ]


def test_fake_data_is_per_instance_and_reset_restores_it(push_fake: PushFake) -> None:
    push_fake.findings.clear()
    push_fake.accounts[0]["email"] = "changed@example.com"
    push_fake.reset()
    assert push_fake.findings == push.FINDINGS and push_fake.findings is not push.FINDINGS
    assert push_fake.accounts[0]["email"] == "john.hill@example.com" == push.ACCOUNTS[0]["email"]
    assert push_fake.detections == push.DETECTIONS and push_fake.detections is not push.DETECTIONS
