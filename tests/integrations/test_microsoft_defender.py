"""Defender for Endpoint against its loopback fake: connection test mapping, skills, token caching."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.fakes.fixtures import MDE_VALUES, call_skill, check_connection, context, endpoints, run_with_client
from vigil.integrations import runner
from vigil.integrations.errors import IntegrationError
from vigil.integrations.http import OutboundClient
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake

MACHINE_1 = mde.MACHINES[0]["id"]
MACHINE_2 = mde.MACHINES[1]["id"]


def test_connection_succeeds_with_token_then_machines(mde_fake: MdeFake) -> None:
    result = check_connection("microsoft_defender", MDE_VALUES, endpoints(mde_fake=mde_fake))
    assert result.ok and result.status_code == 200
    token_request, machines_request = mde_fake.requests
    assert token_request.path == f"/{mde.TENANT_ID}/oauth2/v2.0/token"
    assert token_request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert token_request.form() == {
        "client_id": mde.CLIENT_ID,
        "client_secret": mde.CLIENT_SECRET,
        "grant_type": "client_credentials",
        "scope": f"{mde_fake.url}/.default",
    }
    assert machines_request.path == "/api/machines"
    assert machines_request.params == {"$top": "1"}
    assert machines_request.headers["authorization"].startswith("Bearer eyJ")
    assert machines_request.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    ("values", "status", "cause", "remedy_fragment"),
    [
        ({"client_secret": "wrong-secret"}, 401, "Invalid client secret", "not its Secret ID"),
        ({"tenant_id": "00000000-0000-0000-0000-000000000000"}, 400, "Tenant not found", "tenant) ID"),
        ({"client_id": "11111111-2222-3333-4444-555555555555"}, 400, "Unknown client ID", "client) ID"),
    ],
)
def test_token_endpoint_errors_name_the_wrong_credential(
    mde_fake: MdeFake, values: dict[str, str], status: int, cause: str, remedy_fragment: str
) -> None:
    result = check_connection("microsoft_defender", {**MDE_VALUES, **values}, endpoints(mde_fake=mde_fake))
    assert (result.ok, result.status_code, result.cause) == (False, status, cause)
    assert remedy_fragment in (result.remedy or "")
    assert "AADSTS" in (result.detail or "")


def test_expired_client_secret_is_reported(mde_fake: MdeFake) -> None:
    mde_fake.fail_next(
        status=401,
        path_contains="/token",
        body={
            "error": "invalid_client",
            "error_description": "AADSTS7000222: The provided client secret keys for app are expired.\r\nTrace ID: x",
            "error_codes": [7000222],
        },
    )
    result = check_connection("microsoft_defender", MDE_VALUES, endpoints(mde_fake=mde_fake))
    assert result.cause == "Client secret expired"


@pytest.mark.parametrize(
    ("status", "code", "cause", "remedy"),
    [
        (401, "Unauthorized", "Invalid token", "Regenerate the token and check credentials."),
        (403, "Forbidden", "Insufficient API permissions", "Grant administrator consent."),
        (400, "BadRequest", "Incorrect request format", "Verify endpoint and headers."),
        (500, "InternalServerError", "Service issue", "Retry later."),
    ],
)
def test_api_errors_map_to_the_seed_table(mde_fake: MdeFake, status: int, code: str, cause: str, remedy: str) -> None:
    # 401 is retried once with a fresh token and 500 by the retry policy, so fail enough requests.
    mde_fake.fail_next(3, status=status, path_contains="/api/", body={"error": {"code": code, "message": "x"}})
    result = check_connection("microsoft_defender", MDE_VALUES, endpoints(mde_fake=mde_fake))
    assert (result.ok, result.status_code, result.cause, result.remedy) == (False, status, cause, remedy)


def test_missing_application_role_is_insufficient_permissions(mde_fake: MdeFake) -> None:
    mde_fake.roles = frozenset({"Alert.ReadWrite.All"})
    result = check_connection("microsoft_defender", MDE_VALUES, endpoints(mde_fake=mde_fake))
    assert (result.status_code, result.cause) == (403, "Insufficient API permissions")
    assert "Machine.ReadWrite.All" in (result.detail or "")


def test_list_machines_filters_by_hostname_ip_and_id(mde_fake: MdeFake) -> None:
    output = call_skill(
        "List Machines",
        MDE_VALUES,
        endpoints(mde_fake=mde_fake),
        {"hostname": "Finance-WS", "ip": "10.20.4.17", "machine_id": MACHINE_2, "top": "10"},
    )
    request = mde_fake.requests_to("/api/machines")[-1]
    assert request.method == "GET"
    assert request.params == {
        "$top": "10",
        "$filter": "startswith(computerDnsName,'finance-ws') and lastIpAddress eq '10.20.4.17'"
        f" and id eq '{MACHINE_2}'",
    }
    assert output["count"] == 1
    machine = output["machines"][0]
    assert machine["computer_dns_name"] == "finance-ws-02.contoso.com"
    assert machine["risk_score"] == "High" and machine["machine_tags"] == ["finance"]


def test_list_machines_follows_next_links_up_to_top(mde_fake: MdeFake) -> None:
    mde_fake.page_size = 1
    output = call_skill("List Machines", MDE_VALUES, endpoints(mde_fake=mde_fake), {"top": 2})
    assert [m["id"] for m in output["machines"]] == [MACHINE_1, MACHINE_2]
    pages = mde_fake.requests_to("/api/machines")
    assert [p.params.get("$skip") for p in pages] == [None, "1"]


def test_fetch_alerts_builds_odata_filter(mde_fake: MdeFake) -> None:
    output = call_skill(
        "Fetch Alerts",
        MDE_VALUES,
        endpoints(mde_fake=mde_fake),
        {"severity": "high", "status": "InProgress", "since": "2024-05-01T02:00:00+02:00", "top": 25},
    )
    request = mde_fake.requests_to("/api/alerts")[-1]
    assert request.params == {
        "$top": "25",
        "$filter": "severity eq 'High' and status eq 'InProgress' and alertCreationTime ge 2024-05-01T00:00:00Z",
    }
    assert output["count"] == 1
    alert = output["alerts"][0]
    assert alert["title"] == "Suspicious PowerShell command line"
    assert alert["related_user"] == {"user_name": "jdoe", "domain_name": "CONTOSO"}


def test_fetch_alerts_for_one_machine_uses_its_alerts_endpoint_with_evidence(mde_fake: MdeFake) -> None:
    output = call_skill(
        "Fetch Alerts",
        MDE_VALUES,
        endpoints(mde_fake=mde_fake),
        {"machine_id": MACHINE_1, "include_evidence": "true"},
    )
    request = mde_fake.requests_to("/alerts")[-1]
    assert request.path == f"/api/machines/{MACHINE_1}/alerts"
    assert request.params == {"$top": "100", "$expand": "evidence"}
    assert output["alerts"][0]["evidence"][0]["file_name"] == "rundll32.exe"


def test_advanced_hunting_posts_query(mde_fake: MdeFake) -> None:
    query = "DeviceProcessEvents | where InitiatingProcessFileName =~ 'winword.exe' | limit 2"
    output = call_skill("Run Advanced Hunting Query", MDE_VALUES, endpoints(mde_fake=mde_fake), {"query": query})
    request = mde_fake.requests_to("/api/advancedqueries/run")[-1]
    assert request.method == "POST" and request.json() == {"Query": query}
    assert request.headers["content-type"] == "application/json"
    assert output["columns"][0] == {"name": "Timestamp", "type": "DateTime"}
    assert output["row_count"] == 2 and output["results"][0]["FileName"] == "powershell.exe"


def test_machine_live_response_posts_commands(mde_fake: MdeFake) -> None:
    commands = [
        {
            "type": "RunScript",
            "params": [
                {"key": "ScriptName", "value": "minidump.ps1"},
                {"key": "Args", "value": "OfficeClickToRun"},
            ],
        },
        {"type": "GetFile", "params": [{"key": "Path", "value": "C:\\windows\\TEMP\\x.zip"}]},
    ]
    inputs = {"machine_id": MACHINE_1, "commands": commands, "comment": "Vigil investigation ACME-1"}
    output = call_skill("Machine Live Response", MDE_VALUES, endpoints(mde_fake=mde_fake), inputs)
    request = mde_fake.requests_to("/runliveresponse")[-1]
    assert request.path == f"/api/machines/{MACHINE_1}/runliveresponse"
    assert request.json() == {"Commands": commands, "Comment": "Vigil investigation ACME-1"}
    action = output["action"]
    assert action["type"] == "LiveResponse" and action["status"] == "Pending"
    assert [c["command_status"] for c in action["commands"]] == ["Created", "Created"]


def test_second_live_response_on_busy_machine_is_a_precise_error(mde_fake: MdeFake) -> None:
    inputs = {
        "machine_id": MACHINE_1,
        "comment": "c",
        "commands": [{"type": "GetFile", "params": [{"key": "Path", "value": "C:\\x"}]}],
    }
    call_skill("Machine Live Response", MDE_VALUES, endpoints(mde_fake=mde_fake), inputs)
    with pytest.raises(IntegrationError) as caught:
        call_skill("Machine Live Response", MDE_VALUES, endpoints(mde_fake=mde_fake), inputs)
    assert caught.value.code == "live_response_busy" and caught.value.status_code == 400
    assert len(mde_fake.requests_to("/runliveresponse")) == 2  # POST is not retried on a 4xx


def test_live_response_rejects_parameters_of_another_command_type() -> None:
    with pytest.raises(IntegrationError) as caught:
        call_skill(
            "Machine Live Response",
            MDE_VALUES,
            endpoints(),
            {
                "machine_id": "m",
                "comment": "c",
                "commands": [{"type": "GetFile", "params": [{"key": "ScriptName", "value": "x"}]}],
            },
        )
    assert caught.value.code == "invalid_skill_input"


def test_isolate_machine_posts_comment_and_type(mde_fake: MdeFake) -> None:
    output = call_skill(
        "Isolate Machine",
        MDE_VALUES,
        endpoints(mde_fake=mde_fake),
        {"machine_id": MACHINE_2, "isolation_type": "selective", "comment": "Isolate machine due to alert 1234"},
    )
    request = mde_fake.requests_to("/isolate")[-1]
    assert request.method == "POST" and request.path == f"/api/machines/{MACHINE_2}/isolate"
    assert request.json() == {"Comment": "Isolate machine due to alert 1234", "IsolationType": "Selective"}
    assert output["action"]["type"] == "Isolate" and output["action"]["scope"] == "Selective"


def test_unknown_machine_is_not_found(mde_fake: MdeFake) -> None:
    with pytest.raises(IntegrationError) as caught:
        call_skill(
            "Isolate Machine", MDE_VALUES, endpoints(mde_fake=mde_fake), {"machine_id": "0" * 40, "comment": "c"}
        )
    assert (caught.value.status_code, caught.value.code, caught.value.transient) == (404, "not_found", False)


def _repeat_list_machines(mde_fake: MdeFake, times: int, pause: float = 0.0) -> None:
    async def body(http: OutboundClient) -> None:
        ctx = context(http, MDE_VALUES, endpoints(mde_fake=mde_fake))
        for _ in range(times):
            await runner.run_skill("List Machines", ctx, {"top": 1})
            await asyncio.sleep(pause)

    run_with_client(body)


def test_token_is_fetched_once_for_many_calls_within_its_lifetime(mde_fake: MdeFake) -> None:
    _repeat_list_machines(mde_fake, 5)
    assert mde_fake.token_requests == 1
    assert len({r.headers["authorization"] for r in mde_fake.requests_to("/api/machines")}) == 1


def test_concurrent_calls_share_one_token_fetch(mde_fake: MdeFake) -> None:
    async def body(http: OutboundClient) -> None:
        ctx = context(http, MDE_VALUES, endpoints(mde_fake=mde_fake))
        await asyncio.gather(*(runner.run_skill("List Machines", ctx, {"top": 1}) for _ in range(5)))

    run_with_client(body)
    assert mde_fake.token_requests == 1


def test_token_is_refreshed_after_it_expires(mde_fake: MdeFake) -> None:
    mde_fake.expires_in = 1  # reused for 0.9 s (10% margin), then refreshed
    started = time.monotonic()
    _repeat_list_machines(mde_fake, 4, pause=0.35)
    assert time.monotonic() - started >= 1.0
    assert mde_fake.token_requests == 2


def test_token_is_refreshed_once_on_401_and_the_call_retried(mde_fake: MdeFake) -> None:
    async def body(http: OutboundClient) -> dict[str, object]:
        ctx = context(http, MDE_VALUES, endpoints(mde_fake=mde_fake))
        await runner.run_skill("List Machines", ctx, {"top": 1})
        mde_fake.revoke_tokens()
        return await runner.run_skill("List Machines", ctx, {"top": 1})

    output = run_with_client(body)
    assert output["count"] == 1
    assert mde_fake.token_requests == 2
    statuses = [r.headers["authorization"] for r in mde_fake.requests_to("/api/machines")]
    assert len(statuses) == 3 and statuses[0] == statuses[1] != statuses[2]


def test_persistent_401_is_invalid_token_after_one_refresh(mde_fake: MdeFake) -> None:
    mde_fake.fail_next(5, status=401, path_contains="/api/", body={"error": {"code": "Unauthorized", "message": "x"}})
    with pytest.raises(IntegrationError) as caught:
        call_skill("List Machines", MDE_VALUES, endpoints(mde_fake=mde_fake))
    assert caught.value.cause == "Invalid token"
    assert mde_fake.token_requests == 2 and len(mde_fake.requests_to("/api/machines")) == 2
