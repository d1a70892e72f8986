"""The built-in analyst's scoring: verdicts from evidence, checkpoint answers, confidence and determinism."""

from __future__ import annotations

from typing import Any

from tests.ai import alerts
from tests.investigations import samples
from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.schemas import (
    AlertFacts,
    Analysis,
    Category,
    Disposition,
    Evidence,
    EvidenceKind,
    EvidenceStatus,
    Severity,
    Verdict,
)
from vigil.investigations.entities import extract_entities


def _skill(skill_id: str, output: dict[str, Any], name: str | None = None) -> Evidence:
    return Evidence(
        step_name=name or skill_id, kind=EvidenceKind.SKILL, skill_id=skill_id, status=EvidenceStatus.OK, output=output
    )


def _failed(skill_id: str, status: EvidenceStatus = EvidenceStatus.ERROR) -> Evidence:
    error = "HTTP 503 from api.securitycenter.microsoft.com" if status is EvidenceStatus.ERROR else None
    return Evidence(step_name=skill_id, kind=EvidenceKind.SKILL, skill_id=skill_id, status=status, error=error)


def _answer(answer: str) -> Evidence:
    return Evidence(
        step_name="Ask the user to confirm",
        kind=EvidenceKind.CHECKPOINT,
        status=EvidenceStatus.OK,
        output={"answer": answer, "answered_by": "alice.smith@contoso.com"},
    )


def _analyze(alert: AlertFacts, evidence: list[Evidence]) -> Analysis:
    return BuiltinInvestigator().analyze(alert, extract_entities(alert.alert_content), evidence)


RELATED_NONE = _skill("Look up related alerts", {"count": 0, "alerts": []})
MFA_REGISTERED = _skill(
    "Find Account by Email", {"result": [{"email": "alice.smith@contoso.com", "mfaRegistered": True}]}
)
NO_MFA = _skill("Find Account by Email", {"result": [{"email": "alice.smith@contoso.com", "mfaRegistered": False}]})
HIGH_ALERTS_ON_MACHINE = _skill(
    "Fetch Alerts",
    {
        "value": [
            {"id": "da637472900382838869_1364969609", "severity": "High"},  # the alert itself: not counted
            {"id": "da111", "severity": "High", "title": "Suspicious PowerShell command line"},
            {"id": "da222", "severity": "Medium"},
        ]
    },
)
HASH_ON_OTHER_MACHINES = _skill(
    "Run Advanced Hunting Query",
    {
        "Schema": [{"Name": "DeviceName", "Type": "String"}],
        "Results": [
            {"DeviceName": "ws-0142.corp.contoso.com", "SHA256": samples.DEFENDER_SHA256},
            {"DeviceName": "ws-0007.corp.contoso.com", "SHA256": samples.DEFENDER_SHA256},
            {"DeviceName": "srv-file01.corp.contoso.com", "SHA256": samples.DEFENDER_SHA256},
        ],
    },
    name="Defender: machines with the file hash",
)


def test_high_severity_alerts_and_hash_spread_make_an_endpoint_alert_malicious() -> None:
    analysis = _analyze(alerts.DEFENDER, [HIGH_ALERTS_ON_MACHINE, HASH_ON_OTHER_MACHINES])

    assert analysis.verdict is Verdict.MALICIOUS
    assert analysis.severity in {Severity.HIGH, Severity.CRITICAL}
    assert analysis.disposition is Disposition.TRUE_POSITIVE
    assert analysis.category is Category.ENDPOINT_MALWARE
    assert "1 other high-severity alert(s)" in analysis.summary
    assert any("srv-file01.corp.contoso.com, ws-0007.corp.contoso.com" in finding for finding in analysis.key_findings)
    assert any("Isolate the machine" in action for action in analysis.recommended_actions)


def test_the_alerting_machine_itself_does_not_count_as_spread() -> None:
    own_only = _skill(
        "Run Advanced Hunting Query", {"Results": [{"DeviceName": "ws-0142.corp.contoso.com"}]}, name="hunt"
    )

    analysis = _analyze(alerts.DEFENDER, [own_only])

    assert "'hunt' found no other machine (-0.5)" in analysis.key_findings


def test_confirmed_sign_in_with_mfa_and_no_related_alerts_is_a_benign_true_positive() -> None:
    analysis = _analyze(alerts.OKTA_SIGNIN, [RELATED_NONE, MFA_REGISTERED, _answer("confirmed")])

    assert analysis.verdict is Verdict.BENIGN
    assert analysis.severity is Severity.INFORMATIONAL
    assert analysis.disposition is Disposition.BENIGN_TRUE_POSITIVE
    assert "alice.smith@contoso.com confirmed the activity was them (-3.0)" in analysis.key_findings


def test_denied_checkpoint_raises_the_verdict() -> None:
    without = _analyze(alerts.OKTA_SIGNIN, [RELATED_NONE, NO_MFA])
    denied = _analyze(alerts.OKTA_SIGNIN, [RELATED_NONE, NO_MFA, _answer("denied")])

    assert without.verdict is Verdict.INCONCLUSIVE
    assert denied.verdict is Verdict.MALICIOUS
    assert denied.disposition is Disposition.TRUE_POSITIVE
    assert "said" not in without.summary and "not them" in denied.summary


def test_confirmation_does_not_lower_a_verdict_that_evidence_contradicts() -> None:
    related = _skill(
        "Look up related alerts",
        {"count": 3, "alerts": [{"alert_id": "ACME-OKTA-7", "shared": {"ips": ["91.214.124.19"]}}]},
    )

    analysis = _analyze(alerts.OKTA_SIGNIN, [related, NO_MFA, _answer("confirmed")])

    assert analysis.verdict is Verdict.SUSPICIOUS
    assert "IP 91.214.124.19 also appears in other alerts (+1.0)" in analysis.key_findings
    assert any("but the other evidence contradicts it" in finding for finding in analysis.key_findings)


def test_checkpoint_timeout_is_neutral() -> None:
    without = _analyze(alerts.OKTA_SIGNIN, [RELATED_NONE, MFA_REGISTERED])
    timed_out = _analyze(alerts.OKTA_SIGNIN, [RELATED_NONE, MFA_REGISTERED, _answer("timeout")])

    assert timed_out.verdict is without.verdict
    assert "score -1.0" in without.summary and "score -1.0" in timed_out.summary


def test_actor_turning_off_a_security_setting_makes_an_edge_change_malicious() -> None:
    audit = _skill(
        "Edge Get Account Audit Logs for Detections",
        {
            "result": [
                {
                    "action": {"type": "change_setting", "result": True},
                    "metadata": {"name": "security_level", "value": "essentially_off"},
                    "newValue": "essentially_off",
                    "resource": {"type": "zone"},
                },
                {"action": {"type": "rule_delete"}, "metadata": {"type": "firewall"}, "resource": {"type": "waf"}},
            ]
        },
    )
    related = _skill("Look up related alerts", {"count": 6, "alerts": []})

    analysis = _analyze(alerts.CLOUDFLARE, [related, audit, NO_MFA])

    assert analysis.verdict is Verdict.MALICIOUS
    assert "The actor made 2 security-setting change(s) (+2.0)" in analysis.key_findings
    assert "2 change(s) turned a security control down or off (+1.0)" in analysis.key_findings
    assert analysis.recommended_actions[0] == "Revert the Cloudflare setting or rule change"


def test_harmless_actor_changes_lower_the_score() -> None:
    audit = _skill(
        "Edge Get Account Audit Logs for Detections",
        {"result": [{"action": {"type": "purge_cache"}, "resource": {"type": "zone"}, "metadata": {}}]},
    )

    analysis = _analyze(alerts.CLOUDFLARE, [RELATED_NONE, audit, MFA_REGISTERED])

    assert analysis.verdict is Verdict.BENIGN
    assert analysis.disposition is Disposition.FALSE_POSITIVE


def test_without_evidence_the_verdict_is_inconclusive_with_low_confidence() -> None:
    analysis = _analyze(alerts.GENERIC, [])

    assert analysis.verdict is Verdict.INCONCLUSIVE
    assert analysis.disposition is Disposition.PENDING
    assert analysis.confidence < 0.3
    assert "No evidence pointed either way" in analysis.summary


def test_failed_and_skipped_steps_lower_confidence_and_are_reported() -> None:
    complete = _analyze(alerts.DEFENDER, [HIGH_ALERTS_ON_MACHINE, HASH_ON_OTHER_MACHINES])
    partial = _analyze(
        alerts.DEFENDER,
        [
            HIGH_ALERTS_ON_MACHINE,
            HASH_ON_OTHER_MACHINES,
            _failed("List Machines"),
            _failed("Look up related alerts", EvidenceStatus.SKIPPED),
        ],
    )

    assert partial.confidence < complete.confidence
    assert "(1 failed, 1 skipped)" in partial.summary
    assert "Step 'List Machines' failed: HTTP 503 from api.securitycenter.microsoft.com" in partial.key_findings


def test_inconclusive_analysis_asks_to_fix_the_steps_that_gave_no_evidence() -> None:
    analysis = _analyze(alerts.GENERIC, [_failed("List Machines")])

    assert analysis.verdict is Verdict.INCONCLUSIVE
    assert "Fix or connect the integrations for: List Machines" in analysis.recommended_actions


def test_source_severity_counts_as_weak_evidence() -> None:
    analysis = _analyze(alerts.GUARDDUTY, [])

    assert analysis.key_findings == ["The source rated the alert's severity 8 (+1.0)"]
    assert analysis.verdict is Verdict.INCONCLUSIVE


def test_unrecognised_skill_outputs_are_ignored() -> None:
    odd = [
        _skill("Fetch Alerts", {"value": "not a list"}),
        _skill("Run Advanced Hunting Query", {"Results": [1, "x", None]}),
        _skill("Find Account by Email", {}),
        _skill("Some Future Skill", {"anything": True}),
        Evidence(step_name="ask", kind=EvidenceKind.CHECKPOINT, status=EvidenceStatus.OK, output={"answer": "maybe"}),
    ]

    analysis = _analyze(alerts.GENERIC, odd)

    assert analysis.verdict is Verdict.INCONCLUSIVE


def test_analysis_is_deterministic() -> None:
    evidence = [HIGH_ALERTS_ON_MACHINE, HASH_ON_OTHER_MACHINES, RELATED_NONE, _failed("List Machines")]

    first = _analyze(alerts.DEFENDER, evidence)
    second = _analyze(alerts.DEFENDER, list(evidence))

    assert first == second
    assert first.model_dump_json() == second.model_dump_json()


def test_skill_output_models_with_snake_case_fields_are_scored_like_vendor_json() -> None:
    """The runner stores `output.model_dump(mode="json")`: list names and snake_case fields of the skills."""
    evidence = [
        _skill("List Machines", {"machines": [{"id": samples.DEFENDER_MACHINE_ID, "risk_score": "High"}], "count": 1}),
        _skill(
            "Find Account by Email", {"found": True, "accounts": [{"email": "a@contoso.com", "mfa_registered": False}]}
        ),
        _skill(
            "Edge Get Account Audit Logs for Detections",
            {
                "entries": [
                    {"id": "e1", "action": {"type": "change_setting"}, "metadata": {"name": "waf"}, "new_value": "off"}
                ],
                "page_info": {"page": 1},
            },
        ),
        _skill(
            "Get Edge Security Center Insights",
            {"insights": [{"id": "i1", "severity": "Critical", "dismissed": False}]},
        ),
    ]

    findings = _analyze(alerts.CLOUDFLARE, evidence).key_findings

    assert "Defender rates the machine's risk High (+1.5)" in findings
    assert "Push Security shows the user's account without MFA (+1.5)" in findings
    assert "1 change(s) turned a security control down or off (+1.0)" in findings
    assert "1 open critical Cloudflare security insight(s) (+1.0)" in findings
