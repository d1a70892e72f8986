"""Cloudflare against its loopback fake: both auth methods, error-code mapping and every skill's request."""

from __future__ import annotations

import pytest

from tests.fakes.fixtures import (
    CLOUDFLARE_KEY_VALUES,
    CLOUDFLARE_TOKEN_VALUES,
    call_skill,
    check_connection,
    endpoints,
)
from vigil.integrations.cloudflare import fake as cf
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.errors import IntegrationError

TOKEN_HEADERS = {"authorization": f"Bearer {cf.USER_TOKEN}", "content-type": "application/json"}


def test_api_token_connection_verifies_token_then_account(cloudflare_fake: CloudflareFake) -> None:
    result = check_connection("cloudflare", CLOUDFLARE_TOKEN_VALUES, endpoints(cloudflare_fake=cloudflare_fake))
    assert result.ok, result
    verify, audit = cloudflare_fake.requests
    assert verify.path == "/client/v4/user/tokens/verify"
    assert {k: verify.headers[k] for k in TOKEN_HEADERS} == TOKEN_HEADERS
    assert "x-auth-key" not in verify.headers
    assert audit.path == f"/client/v4/accounts/{cf.ACCOUNT_ID}/audit_logs" and audit.params == {"per_page": "1"}


def test_account_owned_token_verifies_on_the_account_endpoint(cloudflare_fake: CloudflareFake) -> None:
    values = {**CLOUDFLARE_TOKEN_VALUES, "api_token": cf.ACCOUNT_TOKEN}
    result = check_connection("cloudflare", values, endpoints(cloudflare_fake=cloudflare_fake))
    assert result.ok, result
    assert [r.path for r in cloudflare_fake.requests][:2] == [
        "/client/v4/user/tokens/verify",
        f"/client/v4/accounts/{cf.ACCOUNT_ID}/tokens/verify",
    ]


def test_global_key_connection_reads_one_audit_log_with_key_headers(cloudflare_fake: CloudflareFake) -> None:
    values = {**CLOUDFLARE_KEY_VALUES, "zone_id": cf.ZONE_ID}
    result = check_connection("cloudflare", values, endpoints(cloudflare_fake=cloudflare_fake))
    assert result.ok, result
    assert "example.com" in (result.detail or "")
    audit, zone = cloudflare_fake.requests
    assert audit.path == f"/client/v4/accounts/{cf.ACCOUNT_ID}/audit_logs" and audit.params == {"per_page": "1"}
    assert audit.headers["x-auth-email"] == cf.EMAIL and audit.headers["x-auth-key"] == cf.GLOBAL_KEY
    assert "authorization" not in audit.headers
    assert zone.path == f"/client/v4/zones/{cf.ZONE_ID}"


@pytest.mark.parametrize(
    ("values", "status", "condition"),
    [
        ({**CLOUDFLARE_TOKEN_VALUES, "api_token": "Zz" * 20}, 401, "Invalid API Token"),
        ({**CLOUDFLARE_TOKEN_VALUES, "api_token": "short"}, 400, "Invalid API Token"),
        ({**CLOUDFLARE_KEY_VALUES, "global_api_key": "0" * 37}, 403, "Invalid API Key"),
        ({**CLOUDFLARE_KEY_VALUES, "global_api_key": "not-a-key"}, 400, "Invalid API Key"),
        ({**CLOUDFLARE_KEY_VALUES, "email": "someone@example.org"}, 403, "Invalid API Key"),
        ({**CLOUDFLARE_TOKEN_VALUES, "account_id": "0" * 32}, 400, "Account ID not found"),
        ({**CLOUDFLARE_KEY_VALUES, "account_id": "0" * 32}, 400, "Account ID not found"),
        ({**CLOUDFLARE_TOKEN_VALUES, "zone_id": "f" * 32}, 400, "Zone ID not found"),
    ],
)
def test_connection_failures_map_to_seed_conditions(
    cloudflare_fake: CloudflareFake, values: dict[str, str], status: int, condition: str
) -> None:
    result = check_connection("cloudflare", values, endpoints(cloudflare_fake=cloudflare_fake))
    assert result.ok is False
    assert result.status_code == status
    assert (result.cause or "").startswith(condition), result
    assert result.remedy


def test_malformed_authentication_email_is_reported_as_email(cloudflare_fake: CloudflareFake) -> None:
    cloudflare_fake.fail_next(
        status=400,
        body={
            "success": False,
            "messages": [],
            "result": None,
            "errors": [
                {
                    "code": 6003,
                    "message": "Invalid request headers",
                    "error_chain": [{"code": 6102, "message": "Invalid format for X-Auth-Email header"}],
                }
            ],
        },
    )
    result = check_connection("cloudflare", CLOUDFLARE_KEY_VALUES, endpoints(cloudflare_fake=cloudflare_fake))
    assert result.cause == "Invalid Authentication Email: wrong account email"


def test_token_without_permission_is_permission_denied(cloudflare_fake: CloudflareFake) -> None:
    cloudflare_fake.token_permissions = frozenset({"zone"})
    result = check_connection("cloudflare", CLOUDFLARE_TOKEN_VALUES, endpoints(cloudflare_fake=cloudflare_fake))
    assert (result.status_code, result.cause) == (403, "Permission denied: token lacks required permissions")
    assert "10000 Authentication error" in (result.detail or "")


def test_expired_token_is_invalid_api_token(cloudflare_fake: CloudflareFake) -> None:
    cloudflare_fake.token_status = "expired"
    cloudflare_fake.fail_next(
        status=200,
        path_contains="/user/tokens/verify",
        body={"success": True, "errors": [], "messages": [], "result": {"id": "ed17", "status": "expired"}},
    )
    result = check_connection("cloudflare", CLOUDFLARE_TOKEN_VALUES, endpoints(cloudflare_fake=cloudflare_fake))
    assert result.cause == "Invalid API Token: token expired, revoked, or missing scope"
    assert result.detail == "The API token is expired."


def test_rate_limit_code_is_transient(cloudflare_fake: CloudflareFake) -> None:
    body = {
        "success": False,
        "messages": [],
        "result": None,
        "errors": [{"code": 971, "message": "Please wait and consider throttling your request speed"}],
    }
    cloudflare_fake.fail_next(3, status=429, body=body, headers={"Retry-After": "0"})
    with pytest.raises(IntegrationError) as caught:
        call_skill("Get Edge Audit Logs", CLOUDFLARE_TOKEN_VALUES, endpoints(cloudflare_fake=cloudflare_fake))
    assert caught.value.transient and caught.value.code == "rate_limited" and caught.value.status_code == 429
    assert len(cloudflare_fake.requests) == 3


def test_detection_audit_logs_pass_every_filter(cloudflare_fake: CloudflareFake) -> None:
    output = call_skill(
        "Edge Get Account Audit Logs for Detections",
        CLOUDFLARE_TOKEN_VALUES,
        endpoints(cloudflare_fake=cloudflare_fake),
        {
            "actor_email": "mallory@example.net",
            "actor_ip": "203.0.113.0/24",
            "zone": "example.com",
            "since": "2024-05-01",
            "before": "2024-05-22T00:00:00Z",
            "per_page": "50",
        },
    )
    request = cloudflare_fake.requests[-1]
    assert request.path == f"/client/v4/accounts/{cf.ACCOUNT_ID}/audit_logs"
    assert request.params == {
        "direction": "desc",
        "actor.email": "mallory@example.net",
        "actor.ip": "203.0.113.0/24",
        "zone.name": "example.com",
        "since": "2024-05-01T00:00:00Z",
        "before": "2024-05-22T00:00:00Z",
        "page": "1",
        "per_page": "50",
    }
    assert {k: request.headers[k] for k in TOKEN_HEADERS} == TOKEN_HEADERS
    assert [e["action"]["type"] for e in output["entries"]] == ["add"]
    entry = output["entries"][0]
    assert entry["actor"]["ip"] == "203.0.113.50" and entry["new_value"] == "high"
    assert output["page_info"] == {
        "page": 1,
        "per_page": 50,
        "count": 1,
        "total_count": 1,
        "total_pages": 1,
        "next_page": None,
    }


def test_audit_logs_paginate_with_result_info(cloudflare_fake: CloudflareFake) -> None:
    ends = endpoints(cloudflare_fake=cloudflare_fake)
    first = call_skill("Get Edge Audit Logs", CLOUDFLARE_KEY_VALUES, ends, {"per_page": 2})
    assert len(first["entries"]) == 2 and first["page_info"]["next_page"] == 2
    assert first["page_info"]["total_pages"] == 3
    rest = call_skill("Get Edge Audit Logs", CLOUDFLARE_KEY_VALUES, ends, {"per_page": 2, "page": 2, "pages": 5})
    assert len(rest["entries"]) == 3 and rest["page_info"]["next_page"] is None
    assert [r.params["page"] for r in cloudflare_fake.requests] == ["1", "2", "3"]
    assert cloudflare_fake.requests[0].headers["x-auth-key"] == cf.GLOBAL_KEY


def test_security_center_insights_zone_and_account(cloudflare_fake: CloudflareFake) -> None:
    ends = endpoints(cloudflare_fake=cloudflare_fake)
    zone = call_skill(
        "Get Edge Security Center Insights",
        CLOUDFLARE_TOKEN_VALUES,
        ends,
        {"zone_id": cf.ZONE_ID, "severity": "Moderate"},
    )
    request = cloudflare_fake.requests[-1]
    assert request.path == f"/client/v4/zones/{cf.ZONE_ID}/security-center/insights"
    assert request.params == {"dismissed": "false", "severity": "moderate", "page": "1", "per_page": "25"}
    assert [i["issue_class"] for i in zone["insights"]] == ["always_use_https_not_enabled"]
    account = call_skill("Get Edge Security Center Insights", CLOUDFLARE_TOKEN_VALUES, ends, {})
    assert cloudflare_fake.requests[-1].path == f"/client/v4/accounts/{cf.ACCOUNT_ID}/security-center/insights"
    assert account["page_info"]["total_count"] == 2 and len(account["insights"]) == 2


def test_list_access_applications_filters_by_name_and_domain(cloudflare_fake: CloudflareFake) -> None:
    ends = endpoints(cloudflare_fake=cloudflare_fake)
    output = call_skill("List Edge Access Applications", CLOUDFLARE_TOKEN_VALUES, ends, {"domain": "grafana"})
    assert cloudflare_fake.requests[-1].path == f"/client/v4/accounts/{cf.ACCOUNT_ID}/access/apps"
    assert cloudflare_fake.requests[-1].params == {"page": "1", "per_page": "100"}
    assert [a["name"] for a in output["applications"]] == ["Grafana"]
    zone = call_skill(
        "List Edge Access Applications", CLOUDFLARE_TOKEN_VALUES, ends, {"zone_id": cf.ZONE_ID, "name": "admin"}
    )
    assert cloudflare_fake.requests[-1].path == f"/client/v4/zones/{cf.ZONE_ID}/access/apps"
    assert [a["id"] for a in zone["applications"]] == ["f174e90a-fafe-4643-bbbc-4a0ed4fc8415"]


def test_get_zone_details_by_id_or_filters(cloudflare_fake: CloudflareFake) -> None:
    ends = endpoints(cloudflare_fake=cloudflare_fake)
    one = call_skill("Get Edge Zone Details", CLOUDFLARE_TOKEN_VALUES, ends, {"zone_id": cf.ZONE_ID})
    assert cloudflare_fake.requests[-1].path == f"/client/v4/zones/{cf.ZONE_ID}"
    assert one["zones"][0]["name"] == "example.com" and one["page_info"] is None
    listed = call_skill("Get Edge Zone Details", CLOUDFLARE_TOKEN_VALUES, ends, {"status": "pending"})
    request = cloudflare_fake.requests[-1]
    assert request.path == "/client/v4/zones"
    assert request.params == {"account.id": cf.ACCOUNT_ID, "status": "pending", "page": "1", "per_page": "20"}
    assert [z["name"] for z in listed["zones"]] == ["staging.example.com"]


def test_create_rule_creates_the_zone_entrypoint_then_appends(cloudflare_fake: CloudflareFake) -> None:
    ends = endpoints(cloudflare_fake=cloudflare_fake)
    inputs = {"zone_id": cf.ZONE_ID, "expression": "ip.src eq 203.0.113.50", "description": "Vigil block"}
    first = call_skill("Create Edge Ruleset Rule", CLOUDFLARE_TOKEN_VALUES, ends, inputs)
    entry = f"/client/v4/zones/{cf.ZONE_ID}/rulesets/phases/http_request_firewall_custom/entrypoint"
    get, put = cloudflare_fake.requests
    assert (get.method, get.path, put.method, put.path) == ("GET", entry, "PUT", entry)
    sent = put.json()["rules"][0]
    assert {k: sent[k] for k in ("action", "expression", "description", "enabled")} == {
        "action": "block",
        "expression": "ip.src eq 203.0.113.50",
        "description": "Vigil block",
        "enabled": True,
    }
    assert first["rule"]["ref"] == sent["ref"] and first["ruleset"]["kind"] == "zone"

    second = call_skill(
        "Create Edge Ruleset Rule",
        CLOUDFLARE_TOKEN_VALUES,
        ends,
        {**inputs, "expression": "ip.src eq 203.0.113.51", "action": "managed_challenge"},
    )
    post = cloudflare_fake.requests[-1]
    assert post.method == "POST"
    assert post.path == f"/client/v4/zones/{cf.ZONE_ID}/rulesets/{first['ruleset']['id']}/rules"
    assert post.json()["action"] == "managed_challenge"
    assert second["rule"]["expression"] == "ip.src eq 203.0.113.51"
    assert len(second["ruleset"]["rules"]) == 2 and second["ruleset"]["version"] == "2"


def test_create_account_level_rule_uses_the_account_path(cloudflare_fake: CloudflareFake) -> None:
    output = call_skill(
        "Create Edge Ruleset Rule",
        CLOUDFLARE_KEY_VALUES,
        endpoints(cloudflare_fake=cloudflare_fake),
        {"expression": 'http.host eq "admin.example.com"', "action": "block"},
    )
    assert cloudflare_fake.requests[-1].path.startswith(f"/client/v4/accounts/{cf.ACCOUNT_ID}/rulesets/phases/")
    assert output["ruleset"]["kind"] == "root"


def test_rule_with_unknown_action_is_invalid_input() -> None:
    with pytest.raises(IntegrationError) as caught:
        call_skill(
            "Create Edge Ruleset Rule",
            CLOUDFLARE_TOKEN_VALUES,
            endpoints(),
            {"expression": "ip.src eq 1.1.1.1", "action": "obliterate"},
        )
    assert caught.value.code == "invalid_skill_input"
