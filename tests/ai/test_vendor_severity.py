"""The vendor's own severity is read on each format's scale and is a floor (issue 24 item 5)."""

from __future__ import annotations

import json

import pytest

from tests.ai import alerts
from vigil.ai.builtin.document import fields_of
from vigil.ai.builtin.investigator import BuiltinInvestigator
from vigil.ai.builtin.severity_scales import vendor_rating
from vigil.ai.schemas import Disposition, Severity
from vigil.core.entities import extract_entities


@pytest.mark.parametrize(
    ("provider", "body", "expected"),
    [
        ("crowdstrike", {"Severity": 5, "SeverityName": "Critical"}, Severity.CRITICAL),
        ("crowdstrike", {"Severity": 4}, Severity.HIGH),
        ("crowdstrike", {"severity": 90}, Severity.CRITICAL),
        ("aws", {"Severity": 8}, Severity.HIGH),
        ("aws", {"Severity": 5}, Severity.MEDIUM),
        ("aws", {"Severity": 9.5}, Severity.CRITICAL),
        ("sentinelone", {"threatInfo": {"confidenceLevel": "malicious"}}, Severity.HIGH),
        ("sentinelone", {"threatInfo": {"confidenceLevel": "suspicious"}}, Severity.MEDIUM),
        ("microsoft_defender", {"severity": "High"}, Severity.HIGH),
        ("google_workspace", {"metadata": {"severity": "HIGH"}}, Severity.HIGH),
    ],
)
def test_each_format_is_read_on_its_own_scale(provider: str, body: dict[str, object], expected: Severity) -> None:
    rating = vendor_rating(provider, fields_of(json.dumps(body)))
    assert rating is not None and rating.severity is expected


def test_an_okta_log_level_is_not_a_threat_rating() -> None:
    assert vendor_rating("okta", fields_of(json.dumps({"severity": "WARN"}))) is None


def test_a_critical_detection_with_nothing_that_explains_it_is_no_false_positive() -> None:
    """Regression (issue 24): a Falcon reverse shell rated Critical was closed as a false positive."""
    body = {
        "SeverityName": "Critical",
        "Severity": 5,
        "Tactic": "Command and Control",
        "Hostname": "fin-ws-12",
        "FileName": "notepad.exe",
        "CommandLine": "notepad.exe",
    }
    alert = alerts.alert("crowdstrike", "Falcon detection", body)

    analysis = BuiltinInvestigator().analyze(alert, extract_entities(alert.alert_content), [])

    assert analysis.disposition is Disposition.TRUE_POSITIVE
    assert analysis.severity is Severity.CRITICAL
    assert "no evidence explains it away" in analysis.summary
