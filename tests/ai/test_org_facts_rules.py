"""The organization's facts applied to an alert (O rules): only what a fact covers, cited with its owner and expiry,
and an explanation that yields to strong behaviours."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.ai import alerts
from tests.ai.steps import facts as _facts
from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.schemas import Analysis, Disposition, Evidence, Severity
from vigil.core.entities import extract_entities
from vigil.evidence.signals import AlertFacts

EXPIRES = int(datetime(2027, 3, 1, tzinfo=UTC).timestamp())
SCANNER = "198.51.100.7"


def _fact(kind: str, value: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"f-{kind}",
        "kind": kind,
        "value": value,
        "scope": None,
        "reason": "",
        "owner": "alice@acme.example",
        "created_by": "alice@acme.example",
        "expires_at": EXPIRES,
        **extra,
    }


def _analyze(alert: AlertFacts, *evidence: Evidence) -> Analysis:
    return BuiltinInvestigator().analyze(alert, extract_entities(alert.alert_content), list(evidence))


def _cited(analysis: Analysis, rule: str) -> list[str]:
    return [citation.finding for citation in analysis.citations if citation.rule == rule]


def _scan(command_line: str = "nessusd --scan") -> AlertFacts:
    return alerts.alert(
        "custom",
        "Port scan detected",
        {"severity": "Medium", "hostname": "srv-db-2", "sourceIp": SCANNER, "processCommandLine": command_line},
    )


def test_an_address_in_the_authorised_scanner_range_explains_the_scan_and_is_cited() -> None:
    facts = _facts(_fact("authorised_scanner", "198.51.100.0/28", reason="quarterly Nessus"))

    analysis = _analyze(_scan(), facts)

    assert analysis.disposition is Disposition.FALSE_POSITIVE
    assert _cited(analysis, "O1") == [
        f"[ORG] {SCANNER} is the organization's authorised scanner — fact by alice@acme.example, expires 2027-03-01 "
        "(quarterly Nessus)"
    ]


def test_an_address_outside_every_fact_is_not_explained() -> None:
    analysis = _analyze(_scan(), _facts(_fact("authorised_scanner", "203.0.113.0/24")))

    assert not _cited(analysis, "O1")


def test_credential_dumping_from_the_scanner_is_not_explained_by_it() -> None:
    facts = _facts(_fact("authorised_scanner", SCANNER))

    analysis = _analyze(_scan("mimikatz.exe sekurlsa::logonpasswords"), facts)

    assert analysis.disposition is Disposition.TRUE_POSITIVE
    assert "the evidence contradicts it" in _cited(analysis, "O1")[0]


def test_vip_raises_severity_and_service_account_is_context() -> None:
    alert = alerts.alert(
        "custom",
        "Credential dumping detected",
        {"user": "ceo@acme.example", "hostname": "ws-9", "processCommandLine": "procdump -ma lsass.exe out.dmp"},
    )
    plain = _analyze(alert)
    with_vip = _analyze(alert, _facts(_fact("vip_account", "CEO@acme.example")))
    service = _analyze(alert, _facts(_fact("service_account", "ceo@acme.example")))

    assert plain.disposition is with_vip.disposition is Disposition.TRUE_POSITIVE
    assert list(Severity).index(with_vip.severity) == min(list(Severity).index(plain.severity) + 1, len(Severity) - 1)
    assert _cited(with_vip, "O4")[0].startswith("[ORG] ceo@acme.example is a VIP account")
    assert _cited(service, "O5")[0].startswith("[ORG] ceo@acme.example is a service account")


def _role_change(at: str) -> AlertFacts:
    return alerts.alert(
        "okta",
        "Okta: privileged group membership added",
        {
            "eventType": "group.user_membership.add",
            "published": at,
            "actor": {"alternateId": "ops.admin@acme.example"},
            "client": {"ipAddress": "192.0.2.60"},
            "target": [{"alternateId": "new.hire@acme.example", "type": "User"}],
        },
    )


def _window(scope: str | None) -> Evidence:
    start = int(datetime(2026, 11, 24, 22, tzinfo=UTC).timestamp())
    return _facts(_fact("change_window", "CHG-1042", scope=scope, window_start=start, window_end=start + 4 * 3600))


def test_a_change_inside_an_open_change_window_for_its_scope_is_authorised() -> None:
    analysis = _analyze(_role_change("2026-11-24T23:15:00.000Z"), _window("ops.admin@acme.example"))

    assert analysis.disposition is Disposition.BENIGN_TRUE_POSITIVE
    assert _cited(analysis, "O6")[0].startswith(
        "[ORG] the change at 2026-11-24 23:15 UTC is inside change window CHG-1042 for ops.admin@acme.example"
    )


def test_a_change_window_explains_nothing_outside_its_time_or_its_scope() -> None:
    assert not _cited(_analyze(_role_change("2026-11-25T09:00:00Z"), _window(None)), "O6")
    assert not _cited(_analyze(_role_change("2026-11-24T23:15:00Z"), _window("other.zone.example")), "O6")


def test_a_change_window_never_explains_a_malware_detection() -> None:
    alert = alerts.alert(
        "custom", "Malware detected", {"hostname": "ws-9", "eventTime": "2026-11-24T23:15:00Z", "threat": "Emotet"}
    )

    assert not _cited(_analyze(alert, _window(None)), "O6")


def test_a_ci_network_address_is_context_with_its_fact() -> None:
    alert = alerts.alert(
        "aws",
        "CloudTrail: CreateAccessKey",
        {"eventName": "CreateAccessKey", "userIdentity": {"userName": "deployer"}, "sourceIPAddress": "192.0.2.200"},
    )

    analysis = _analyze(alert, _facts(_fact("ci_network", "192.0.2.192/26")))

    assert [(c.rule, c.points) for c in analysis.citations if c.rule == "O3"] == [("O3", -1.5)]


def test_malformed_facts_are_ignored() -> None:
    analysis = _analyze(_scan(), _facts({"kind": "authorised_scanner", "value": SCANNER}, _fact("nonsense", SCANNER)))

    assert not _cited(analysis, "O1")
