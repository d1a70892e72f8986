"""The console's Facts page (list with expiry and status, add form, revoke) and the case page's offer to record
the fact that explains a closing disposition other than the AI's; plain form posts with CSRF, as a browser sends."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.engine.conftest import engine_settings
from tests.support.harness import Harness
from tests.support.signin import sign_in
from vigil.users import service as users_service
from vigil.users.schemas import Role

ANALYST = "ana@acme.example"


def _user(harness: Harness, email: str, role: Role, *orgs: str) -> None:
    with harness.db.write() as session:
        users_service.create_user(
            session, email=email, password="correct horse battery staple", role=role, organization_codes=orgs
        )


def _form(**fields: str) -> dict[str, str]:
    base = {
        "kind": "vpn_egress",
        "value": "192.0.2.0/24",
        "reason": "Corporate VPN concentrator",
        "scope": "",
        "owner": "net@acme.example",
        "expires": time.strftime("%Y-%m-%d", time.gmtime(time.time() + 30 * 86400)),
        "window_start": "",
        "window_end": "",
        "case": "",
    }
    return base | fields


def test_an_analyst_records_lists_and_revokes_facts(harness: Harness) -> None:
    harness.add_org("ACME", "Acme Corp")
    _user(harness, ANALYST, Role.ANALYST, "ACME")
    csrf = sign_in(harness, ANALYST, role=None)

    index = harness.client.get("/facts", follow_redirects=False)
    assert (index.status_code, index.headers["location"]) == (303, "/facts/ACME")  # one organization: go there
    page = harness.client.get("/facts/ACME").text
    assert 'href="/facts"' in page and "No facts yet" in page
    assert f'name="owner" value="{ANALYST}"' in page  # the analyst vouches unless they name someone else

    refused = harness.client.post(
        "/facts/ACME", data=_form(value="vpn.acme.example") | {"csrf_token": csrf("/facts/ACME")}
    )
    assert refused.status_code == 422
    assert "is not an IP address or CIDR range" in unescape(refused.text)
    assert 'value="vpn.acme.example"' in refused.text and 'aria-invalid="true"' in refused.text

    added = harness.client.post(
        "/facts/ACME", data=_form() | {"csrf_token": csrf("/facts/ACME")}, follow_redirects=False
    )
    assert added.status_code == 303
    listed = harness.client.get(added.headers["location"]).text
    row = re.search(r'<tr data-fact="([0-9a-f-]+)" data-status="active"[^>]*>(.*?)</tr>', listed, re.S)
    assert row is not None and "192.0.2.0/24" in row.group(2) and f"by user:{ANALYST}" in row.group(2)
    assert "Fact recorded" in listed

    no_token = harness.client.post(f"/facts/ACME/{row.group(1)}/revoke", data={})
    assert no_token.status_code == 403
    revoked = harness.client.post(
        f"/facts/ACME/{row.group(1)}/revoke", data={"csrf_token": csrf("/facts/ACME")}, follow_redirects=False
    )
    assert revoked.status_code == 303
    after = harness.client.get(revoked.headers["location"]).text
    assert f'data-fact="{row.group(1)}" data-status="revoked"' in after and "Fact revoked" in after


def test_viewers_read_and_other_tenants_are_refused(harness: Harness) -> None:
    harness.add_org("ACME")
    harness.add_org("BETA")
    key = harness.add_key("ACME").api_key
    body = {
        "kind": "service_account",
        "value": "svc-backup",
        "reason": "Nightly backup job",
        "owner": "it@acme.example",
    }
    created = harness.client.post(
        "/serviceapi/organizations/ACME/facts",
        json=body | {"expires_at": int(time.time()) + 86400},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert created.status_code == 201
    _user(harness, "vic@acme.example", Role.VIEWER, "ACME")
    _user(harness, "bob@beta.example", Role.ANALYST, "BETA")

    csrf = sign_in(harness, "vic@acme.example", role=None)
    shown = harness.client.get("/facts/ACME").text
    assert "svc-backup" in shown and "Record a fact" not in shown and ">Revoke<" not in shown
    token = csrf("/account")
    assert harness.client.post("/facts/ACME", data=_form() | {"csrf_token": token}).status_code == 403

    csrf = sign_in(harness, "bob@beta.example", role=None)
    assert harness.client.get("/facts/ACME").status_code == 403
    fact_uuid = created.json()["fact_uuid"]
    refused = harness.client.post(f"/facts/ACME/{fact_uuid}/revoke", data={"csrf_token": csrf("/facts/BETA")})
    assert refused.status_code == 403
    assert (
        harness.client.get("/facts/BETA").status_code == 200
        and "svc-backup" not in harness.client.get("/facts/BETA").text
    )


def _case(harness: Harness, key: str) -> dict[str, Any]:
    content = {
        "userPrincipalName": "jane@acme.example",
        "ipAddress": "198.51.100.23",
        "result": "success",
        "riskEventTypes": ["impossibleTravel"],
    }
    body = harness.alert_body(
        provider="okta", alert_type="Impossible travel sign-in", alert_content=json.dumps(content)
    )
    alert = harness.post_alert(key, body).json()
    harness.wait_for(key, lambda alerts: alerts and alerts[0]["investigation_status"] in (15, 20))
    headers = {"Authorization": f"Bearer {key}"}
    case_id = harness.client.get(f"/serviceapi/alerts/{alert['alert_id']}", headers=headers).json()["case_id"]
    case: dict[str, Any] = harness.client.get(f"/serviceapi/cases/{case_id}", headers=headers).json()
    return case


@pytest.fixture
def engine_harness(db_url: str, tmp_path: Path) -> Iterator[Harness]:
    with Harness(engine_settings(db_url, tmp_path), engine=True) as harness:
        yield harness


def test_closing_against_the_ai_offers_the_fact_prefilled_from_the_case(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    _user(harness, ANALYST, Role.ANALYST, "ACME")
    case = _case(harness, key)
    assert case["ai_disposition"] == "true_positive", case["ai_disposition"]
    csrf = sign_in(harness, ANALYST, role=None)
    case_page = f"/cases/{case['case_id']}"
    assert "Record the fact that explains it" not in harness.client.get(case_page).text  # open: nothing to explain

    closed = harness.client.post(
        f"{case_page}/change",
        data={
            "field": "status",
            "value": "closed",
            "expected": case["status"],
            "disposition": "benign_true_positive",
            "csrf_token": csrf(case_page),
        },
        follow_redirects=False,
    )
    assert closed.status_code == 303, closed.text
    page = harness.client.get(case_page).text
    assert "Record the fact that explains it" in page
    links = {unescape(href) for href in re.findall(r'<a class="button" href="(/facts/ACME\?[^"]+)"', page)}
    offered = {
        (q["kind"][0], q["value"][0] if "value" in q else "")
        for q in (parse_qs(urlsplit(u).query, keep_blank_values=True) for u in links)
    }
    assert {
        ("authorised_scanner", "198.51.100.23"),
        ("vpn_egress", "198.51.100.23"),
        ("service_account", "jane@acme.example"),
        ("change_window", ""),
    } <= offered

    scanner = next(u for u in links if "kind=authorised_scanner" in u)
    form_page = harness.client.get(scanner).text
    assert 'value="198.51.100.23"' in form_page and '<option value="authorised_scanner" selected>' in form_page
    assert f"Case {case['case_id']} was closed as benign true positive" in unescape(form_page)
    fields = dict(re.findall(r'<input type="hidden" name="(case)" value="([^"]*)"', form_page))
    assert fields == {"case": case["case_id"]}
    recorded = harness.client.post(
        "/facts/ACME",
        data=_form(
            kind="authorised_scanner",
            value="198.51.100.23",
            case=case["case_id"],
            reason=f"Case {case['case_id']}: the weekly external scan",
        )
        | {"csrf_token": csrf(scanner)},
        follow_redirects=False,
    )
    assert recorded.status_code == 303
    back = harness.client.get(recorded.headers["location"]).text
    assert f'href="/cases/{case["case_id"]}"' in back
    listed = harness.client.get("/serviceapi/organizations/ACME/facts", headers={"Authorization": f"Bearer {key}"})
    assert [(f["kind"], f["value"]) for f in listed.json()["facts"]] == [("authorised_scanner", "198.51.100.23")]


def test_the_case_page_lists_the_facts_the_investigation_consulted(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    _user(harness, ANALYST, Role.ANALYST, "ACME")
    fact = {
        "kind": "vpn_egress",
        "value": "198.51.100.0/24",
        "reason": "GlobalProtect egress",
        "scope": "all remote staff",
        "owner": "net@acme.example",
        "expires_at": int(time.time()) + 30 * 86400,
    }
    recorded = harness.client.post(
        "/serviceapi/organizations/ACME/facts", json=fact, headers={"Authorization": f"Bearer {key}"}
    )
    assert recorded.status_code == 201, recorded.text
    case = _case(harness, key)
    sign_in(harness, ANALYST, role=None)

    page = harness.client.get(f"/cases/{case['case_id']}").text

    table = page[page.index('class="consulted-facts"') :]
    table = table[: table.index("</table>")]
    assert "Organization facts consulted" in table and "(1 active)" in table
    assert "<code>198.51.100.0/24</code>" in table
    assert "GlobalProtect egress" in table and "net@acme.example" in table and "all remote staff" in table
