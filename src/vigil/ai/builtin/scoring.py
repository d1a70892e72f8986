"""Evidence → signed points. Positive points argue malicious, negative benign (docs/analyst.md, "Scoring").

Each rule reads one kind of evidence and returns signals that carry both the points and the sentence the
summary shows, so every number in a verdict can be traced to a sentence an analyst can check.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vigil.ai.builtin import evidence as read
from vigil.ai.builtin.catalog import SkillId
from vigil.ai.schemas import AlertFacts, CheckpointAnswer, Evidence, EvidenceKind, EvidenceStatus
from vigil.investigations.entities import Entities

RELATED_MANY = 5
RELATED_MANY_POINTS = 2.0
RELATED_SOME_POINTS = 1.0
RELATED_NONE_POINTS = -0.5
RELATED_SHARED_IP_POINTS = 1.0
MACHINE_HIGH_ALERT_POINTS = 3.0
MACHINE_MEDIUM_ALERT_POINTS = 1.0
MACHINE_NO_ALERT_POINTS = -0.5
SPREAD_WIDE = 5
SPREAD_WIDE_POINTS = 3.0
SPREAD_POINTS = 2.0
SPREAD_NONE_POINTS = -0.5
RISK_HIGH_POINTS = 1.5
RISK_MEDIUM_POINTS = 0.5
EDGE_SECURITY_CHANGE_POINTS = 2.0
EDGE_WEAKENING_POINTS = 1.0
EDGE_HARMLESS_POINTS = -1.0
EDGE_INSIGHT_CRITICAL_POINTS = 1.0
NO_MFA_POINTS = 1.5
MFA_POINTS = -0.5
SOURCE_HIGH_POINTS = 1.0
SOURCE_MEDIUM_POINTS = 0.5
DENIED_POINTS = 4.0
CONFIRMED_POINTS = -3.0
#: A confirmation is not believed when the skill evidence already adds up to at least this much.
CONTRADICTION_THRESHOLD = 2.0

#: Words that make a Cloudflare audit entry a security-setting change.
EDGE_SECURITY_TERMS = (
    "waf",
    "firewall",
    "security_level",
    "ruleset",
    "ssl",
    "tls",
    "ddos",
    "bot",
    "access",
    "rate_limit",
    "token",
    "api_key",
    "member",
    "two_factor",
)
#: New values (or action words) that turn a security control down or off.
EDGE_WEAKENING_VALUES = frozenset({"off", "essentially_off", "disabled", "false", "0", "low", "allow", "bypass"})
EDGE_WEAKENING_ACTIONS = ("delete", "remove", "disable")


@dataclass(frozen=True)
class Signal:
    """Points for or against maliciousness, with the finding that justifies them."""

    points: float
    finding: str


SkillRule = Callable[[Evidence, AlertFacts, Entities], list[Signal]]


def score_evidence(alert: AlertFacts, entities: Entities, evidence: Sequence[Evidence]) -> list[Signal]:
    """All signals: the alert's own severity, every successful skill step, then checkpoint answers."""
    skill_signals: list[Signal] = []
    for item in evidence:
        if item.kind is EvidenceKind.SKILL and item.status is EvidenceStatus.OK and item.skill_id is not None:
            rule = SKILL_RULES.get(item.skill_id)
            if rule is not None:
                skill_signals.extend(rule(item, alert, entities))
    skill_points = sum(signal.points for signal in skill_signals)
    checkpoint_signals = [
        signal
        for item in evidence
        if item.kind is EvidenceKind.CHECKPOINT and item.status is EvidenceStatus.OK
        for signal in _checkpoint(item, skill_points)
    ]
    return _source_severity(alert) + skill_signals + checkpoint_signals


def checkpoint_answer(item: Evidence) -> CheckpointAnswer | None:
    """The recorded answer of a checkpoint step (``output.answer``), None when missing or unknown."""
    try:
        return CheckpointAnswer(read.text(item.output or {}, "answer"))
    except ValueError:
        return None


def _checkpoint(item: Evidence, skill_points: float) -> list[Signal]:
    answer = checkpoint_answer(item)
    who = read.text(item.output or {}, "answered_by", "user_email") or "the user"
    if answer is CheckpointAnswer.DENIED:
        return [Signal(DENIED_POINTS, f"{who} answered that the activity was not them")]
    if answer is CheckpointAnswer.CONFIRMED:
        if skill_points >= CONTRADICTION_THRESHOLD:
            return [Signal(0.0, f"{who} confirmed the activity, but the other evidence contradicts it")]
        return [Signal(CONFIRMED_POINTS, f"{who} confirmed the activity was them")]
    if answer is CheckpointAnswer.TIMEOUT:
        return [Signal(0.0, f"No answer from {who} before the checkpoint timed out")]
    return []


def _source_severity(alert: AlertFacts) -> list[Signal]:
    """The severity the source system gave the alert: a detection is weak evidence by itself."""
    try:
        document = json.loads(alert.alert_content)
    except (ValueError, RecursionError):
        return []
    if not isinstance(document, dict):
        return []
    raw = read.text(document, "severity")
    label = _severity_label(raw)
    if label == "high":
        return [Signal(SOURCE_HIGH_POINTS, f"The source rated the alert's severity {raw}")]
    if label == "medium":
        return [Signal(SOURCE_MEDIUM_POINTS, f"The source rated the alert's severity {raw}")]
    return []


def _severity_label(raw: str) -> str:
    """Vendor severities to high/medium/other; numbers are GuardDuty's 0-10 scale (7+ high, 4+ medium)."""
    try:
        number = float(raw)
    except ValueError:
        return {"critical": "high", "high": "high", "medium": "medium", "moderate": "medium"}.get(raw, "")
    return "high" if number >= 7 else "medium" if number >= 4 else ""


def _related_alerts(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
    related = read.count(item.output)
    signals: list[Signal] = []
    if related >= RELATED_MANY:
        signals.append(Signal(RELATED_MANY_POINTS, f"{related} other alerts in 30 days share entities"))
    elif related > 0:
        signals.append(Signal(RELATED_SOME_POINTS, f"{related} other alert(s) in 30 days share entities"))
    else:
        signals.append(Signal(RELATED_NONE_POINTS, "No other alert in 30 days shares an entity"))
    shared_ips = {
        ip
        for record in read.records(item.output)
        for ip in read.nested(record, "shared").get("ips", [])
        if isinstance(ip, str) and ip in entities.ips
    }
    if shared_ips:
        listed = ", ".join(sorted(shared_ips))
        signals.append(Signal(RELATED_SHARED_IP_POINTS, f"IP {listed} also appears in other alerts"))
    return signals


def _machine_alerts(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
    """Other Defender alerts on the device; the alert under investigation itself is not counted."""
    content = alert.alert_content.lower()
    others = [record for record in read.records(item.output) if not _is_this_alert(read.text(record, "id"), content)]
    severities = [read.text(record, "severity") for record in others]
    high = severities.count("high")
    medium = severities.count("medium")
    if high:
        return [Signal(MACHINE_HIGH_ALERT_POINTS, f"Defender has {high} other high-severity alert(s) on the machine")]
    if medium:
        finding = f"Defender has {medium} other medium-severity alert(s) on the machine"
        return [Signal(MACHINE_MEDIUM_ALERT_POINTS, finding)]
    if not others:
        return [Signal(MACHINE_NO_ALERT_POINTS, "Defender has no other alerts on the machine")]
    return []


def _is_this_alert(alert_id: str, content: str) -> bool:
    """Defender alert ids are long and unique; a short id could occur in any content by chance."""
    return len(alert_id) >= 8 and alert_id in content


def _machine_risk(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
    risks = {read.text(record, "riskScore") for record in read.records(item.output)}
    if "high" in risks:
        return [Signal(RISK_HIGH_POINTS, "Defender rates the machine's risk High")]
    if "medium" in risks:
        return [Signal(RISK_MEDIUM_POINTS, "Defender rates the machine's risk Medium")]
    return []


def _hunting_spread(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
    """Machines in the hunting rows other than the alert's own: the same artefact elsewhere means spread."""
    rows = read.records(item.output)
    own = {name.split(".")[0] for name in entities.hosts} | set(entities.device_ids)
    machines = {read.text(row, "DeviceName", "DeviceId", "ComputerName", "MachineId") for row in rows} - {""}
    others = sorted(machine for machine in machines if machine.split(".")[0] not in own)
    if len(others) >= SPREAD_WIDE:
        return [Signal(SPREAD_WIDE_POINTS, f"'{item.step_name}' found {len(others)} other machines")]
    if others:
        listed = ", ".join(others)
        return [Signal(SPREAD_POINTS, f"'{item.step_name}' found {len(others)} other machine(s): {listed}")]
    if rows:
        return [Signal(SPREAD_NONE_POINTS, f"'{item.step_name}' found no other machine")]
    return []


def _edge_changes(attributed: bool) -> SkillRule:
    """Cloudflare audit entries: security-setting changes weigh only when the log is filtered to the actor."""

    def rule(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
        entries = read.records(item.output)
        security = [entry for entry in entries if _is_security_change(entry)]
        weakening = [entry for entry in security if _is_weakening(entry)]
        signals: list[Signal] = []
        if attributed and security:
            signals.append(
                Signal(EDGE_SECURITY_CHANGE_POINTS, f"The actor made {len(security)} security-setting change(s)")
            )
        if weakening:
            signals.append(
                Signal(EDGE_WEAKENING_POINTS, f"{len(weakening)} change(s) turned a security control down or off")
            )
        if attributed and entries and not security:
            signals.append(Signal(EDGE_HARMLESS_POINTS, "The actor's recent changes touch no security setting"))
        return signals

    return rule


def _is_security_change(entry: dict[str, object]) -> bool:
    haystack = " ".join(
        (
            read.text(read.nested(entry, "action"), "type"),
            read.text(read.nested(entry, "resource"), "type"),
            json.dumps(read.nested(entry, "metadata"), sort_keys=True).lower(),
        )
    )
    return any(term in haystack for term in EDGE_SECURITY_TERMS)


def _is_weakening(entry: dict[str, object]) -> bool:
    metadata = read.nested(entry, "metadata")
    new_value = read.text(entry, "newValue") or read.text(metadata, "value")
    action = read.text(read.nested(entry, "action"), "type")
    return new_value in EDGE_WEAKENING_VALUES or any(word in action for word in EDGE_WEAKENING_ACTIONS)


def _edge_insights(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
    critical = [
        issue
        for issue in read.records(item.output)
        if read.text(issue, "severity") == "critical" and read.text(issue, "dismissed") != "true"
    ]
    if critical:
        return [Signal(EDGE_INSIGHT_CRITICAL_POINTS, f"{len(critical)} open critical Cloudflare security insight(s)")]
    return []


def _identity_account(item: Evidence, alert: AlertFacts, entities: Entities) -> list[Signal]:
    mfa = [read.text(account, "mfaRegistered") for account in read.records(item.output)]
    if "false" in mfa:
        return [Signal(NO_MFA_POINTS, "Push Security shows the user's account without MFA")]
    if mfa and all(value == "true" for value in mfa):
        return [Signal(MFA_POINTS, "Push Security shows MFA registered on the user's account")]
    return []


SKILL_RULES: dict[str, SkillRule] = {
    SkillId.RELATED_ALERTS: _related_alerts,
    SkillId.FETCH_ALERTS: _machine_alerts,
    SkillId.LIST_MACHINES: _machine_risk,
    SkillId.HUNTING_QUERY: _hunting_spread,
    SkillId.EDGE_DETECTION_AUDIT_LOGS: _edge_changes(attributed=True),
    SkillId.EDGE_AUDIT_LOGS: _edge_changes(attributed=False),
    SkillId.EDGE_INSIGHTS: _edge_insights,
    SkillId.FIND_ACCOUNT: _identity_account,
    SkillId.LIST_ACCOUNTS: _identity_account,
}
