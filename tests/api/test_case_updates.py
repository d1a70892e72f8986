"""Analyst changes to cases over the API: PATCH status/severity/disposition/assignee, comments, close/reopen."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from tests.support.harness import Harness
from vigil.ai.schemas import Analysis, Disposition, Severity, Verdict
from vigil.alerts.models import Alert
from vigil.cases import service as cases_service
from vigil.evidence.knowledge import Category
from vigil.users import service as users_service
from vigil.users.schemas import Role


@pytest.fixture
def keys(harness: Harness) -> dict[str, str]:
    for code in ("ACME", "BETA"):
        harness.add_org(code)
    return {"acme": harness.add_key("ACME", name="acme").api_key, "beta": harness.add_key("BETA", name="beta").api_key}


def open_case(harness: Harness, key: str, org: str = "ACME") -> str:
    """An alert over E1 and its case as the engine opens it (no engine needed for these rules)."""
    created = harness.post_alert(key, harness.alert_body(org=org)).json()
    analysis = Analysis(
        verdict=Verdict.SUSPICIOUS,
        severity=Severity.MEDIUM,
        disposition=Disposition.TRUE_POSITIVE,
        confidence=0.7,
        summary="A WAF rule was disabled by a known admin.",
        key_findings=["Rule 100 disabled"],
        recommended_actions=["Confirm with the admin"],
        category=Category.EDGE_WAF_CHANGE,
    )
    with harness.db.write() as session:
        alert = session.scalar(select(Alert).where(Alert.alert_id == created["alert_id"]))
        assert alert is not None
        case = cases_service.open_case_for_alert(
            session, alert, attempt=1, playbook_uuid=None, playbook_version=None, analysis=analysis
        )
        return case.case_id


def patch(harness: Harness, key: str, case_id: str, body: dict[str, Any]) -> Any:
    return harness.client.patch(f"/serviceapi/cases/{case_id}", json=body, headers={"Authorization": f"Bearer {key}"})


def comment(harness: Harness, key: str, case_id: str, body: dict[str, Any], **headers: str) -> Any:
    return harness.client.post(
        f"/serviceapi/cases/{case_id}/comments", json=body, headers={"Authorization": f"Bearer {key}", **headers}
    )


def changes(case: dict[str, Any]) -> list[tuple[str, str | None, str | None, str]]:
    return [(e["field"], e["from_value"], e["to_value"], e["actor"]) for e in case["timeline"] if e["field"]]


def test_patch_changes_fields_and_records_each_change_once(harness: Harness, keys: dict[str, str]) -> None:
    case_id = open_case(harness, keys["acme"])
    with harness.db.write() as session:
        users_service.create_user(
            session, email="ana@acme.example", password="x" * 16, role=Role.ANALYST, organization_codes=["ACME"]
        )
    body = {"status": "in_progress", "severity": "high", "assignee": "Ana@Acme.example"}
    first = patch(harness, keys["acme"], case_id, body)
    assert first.status_code == 200, first.text
    again = patch(harness, keys["acme"], case_id, body)
    assert again.status_code == 200
    case = again.json()
    assert (case["status"], case["severity"], case["assignee"]) == ("in_progress", "high", "ana@acme.example")
    assert changes(case) == [
        ("severity", "medium", "high", "api_key:acme"),
        ("assignee", None, "ana@acme.example", "api_key:acme"),
        ("status", "new", "in_progress", "api_key:acme"),
    ], "the repeated PATCH changed nothing"
    unassigned = patch(harness, keys["acme"], case_id, {"assignee": None}).json()
    assert unassigned["assignee"] is None
    assert changes(unassigned)[-1] == ("assignee", "ana@acme.example", None, "api_key:acme")


def test_close_needs_a_disposition_and_reopen_clears_closed_at(harness: Harness, keys: dict[str, str]) -> None:
    case_id = open_case(harness, keys["acme"])
    refused = patch(harness, keys["acme"], case_id, {"status": "closed"})
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "disposition_required"
    closed = patch(harness, keys["acme"], case_id, {"status": "closed", "disposition": "false_positive"})
    assert closed.status_code == 200, closed.text
    case = closed.json()
    assert case["status"] == "closed" and case["disposition"] == "false_positive"
    assert case["closed_at"] is not None and case["closed_at"] >= case["created_at"]
    assert [e["kind"] for e in case["timeline"]][-2:] == ["disposition", "closed"]
    back_to_pending = patch(harness, keys["acme"], case_id, {"disposition": "pending"})
    assert back_to_pending.status_code == 422
    reopened = patch(harness, keys["acme"], case_id, {"status": "in_progress"}).json()
    assert reopened["closed_at"] is None
    assert reopened["timeline"][-1]["kind"] == "reopened"


def test_invalid_values_are_422_in_the_one_error_shape(harness: Harness, keys: dict[str, str]) -> None:
    case_id = open_case(harness, keys["acme"])
    for body, field in (
        ({"status": "done"}, "status"),
        ({"severity": "urgent"}, "severity"),
        ({"disposition": "maybe"}, "disposition"),
        ({"status": None}, ""),
        ({}, ""),
        ({"owner": "x"}, "owner"),
    ):
        response = patch(harness, keys["acme"], case_id, body)
        assert response.status_code == 422, body
        error = response.json()["error"]
        assert error["code"] == "validation_error" and error["message"]
        assert any(d["field"] == field for d in error["details"]), (body, error)
    stranger = patch(harness, keys["acme"], case_id, {"assignee": "nobody@acme.example"})
    assert stranger.status_code == 422
    assert stranger.json()["error"]["code"] == "invalid_assignee"
    assert comment(harness, keys["acme"], case_id, {"body": "   "}).status_code == 422
    assert comment(harness, keys["acme"], case_id, {"body": "x" * 10_001}).status_code == 422
    untouched = harness.client.get(f"/serviceapi/cases/{case_id}", headers={"Authorization": f"Bearer {keys['acme']}"})
    assert changes(untouched.json()) == [] and untouched.json()["comments"] == []


def test_another_tenants_case_is_403_and_unknown_is_404(harness: Harness, keys: dict[str, str]) -> None:
    case_id = open_case(harness, keys["acme"])
    forbidden = patch(harness, keys["beta"], case_id, {"status": "contained"})
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == "organization_forbidden"
    assert comment(harness, keys["beta"], case_id, {"body": "hello"}).status_code == 403
    listed = harness.client.get("/serviceapi/cases", headers={"Authorization": f"Bearer {keys['beta']}"})
    assert listed.json()["cases"] == []
    missing = patch(harness, keys["acme"], "ACME-999", {"status": "contained"})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "case_not_found"


def test_comments_are_added_once_per_idempotency_key(harness: Harness, keys: dict[str, str]) -> None:
    case_id = open_case(harness, keys["acme"])
    first = comment(harness, keys["acme"], case_id, {"body": "  Called the admin.  "}, **{"Idempotency-Key": "c1"})
    assert first.status_code == 201
    assert first.json()["body"] == "Called the admin." and first.json()["author"] == "api_key:acme"
    replay = comment(harness, keys["acme"], case_id, {"body": "Called the admin."}, **{"Idempotency-Key": "c1"})
    assert replay.status_code == 200
    assert comment(harness, keys["acme"], case_id, {"body": "Second note"}).status_code == 201
    case = harness.client.get(f"/serviceapi/cases/{case_id}", headers={"Authorization": f"Bearer {keys['acme']}"})
    assert [c["body"] for c in case.json()["comments"]] == ["Called the admin.", "Second note"]
    assert [e["kind"] for e in case.json()["timeline"]].count("comment") == 2


def test_list_filters_by_disposition_assignee_and_text(harness: Harness, keys: dict[str, str]) -> None:
    first = open_case(harness, keys["acme"])
    second = open_case(harness, keys["acme"])
    with harness.db.write() as session:
        users_service.create_user(session, email="boss@vigil.test", password="x" * 16, role=Role.ADMIN)
    patch(harness, keys["acme"], first, {"disposition": "true_positive", "assignee": "boss@vigil.test"})

    def ids(**params: Any) -> list[str]:
        response = harness.client.get(
            "/serviceapi/cases", params=params, headers={"Authorization": f"Bearer {keys['acme']}"}
        )
        assert response.status_code == 200, response.text
        return [c["case_id"] for c in response.json()["cases"]]

    assert ids() == [second, first]
    assert ids(disposition="true_positive") == [first]
    assert ids(assignee="boss@vigil.test") == [first]
    assert ids(assignee="unassigned") == [second]
    assert ids(q=second) == [second]
    assert ids(q="waf rule") == [second, first]
    assert ids(q="100%") == []


def test_case_changes_are_documented_in_openapi(harness: Harness) -> None:
    spec = harness.client.get("/openapi.json").json()
    operations = spec["paths"]["/serviceapi/cases/{case_ref}"]
    assert "patch" in operations
    assert {"403", "404", "409", "422"} <= set(operations["patch"]["responses"])
    assert "post" in spec["paths"]["/serviceapi/cases/{case_ref}/comments"]
