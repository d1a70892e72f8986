"""Signals -> the written analysis: a summary that names the subject and quotes the decisive evidence."""

from __future__ import annotations

import re
from collections.abc import Sequence

from vigil.ai.builtin.actions import recommended_actions
from vigil.ai.builtin.citations import citation
from vigil.ai.builtin.decision import Decision, decide
from vigil.ai.builtin.document import fields_of, name_value_pairs, parsed
from vigil.ai.builtin.scoring import score_evidence
from vigil.ai.schemas import Analysis, Disposition, Evidence, EvidenceStatus
from vigil.core.entities import Entities, EntityKind
from vigil.evidence.knowledge import Category
from vigil.evidence.signals import ALERT_SOURCE, AlertFacts, Signal

SUMMARY_DRIVERS = 3
SUMMARY_ACTIONS = 2
#: What names the subject of an alert, in the order a summary lists them.
SUBJECT_KINDS: tuple[tuple[str, tuple[EntityKind, ...], int], ...] = (
    ("user", (EntityKind.EMAILS, EntityKind.USERS), 3),
    ("host", (EntityKind.HOSTS, EntityKind.DEVICE_IDS), 2),
    ("address", (EntityKind.IPS,), 3),
    ("file", (EntityKind.SHA256S, EntityKind.SHA1S, EntityKind.MD5S), 1),
    ("domain", (EntityKind.DOMAINS,), 2),
)


def analyze(alert: AlertFacts, category: Category, entities: Entities, evidence: Sequence[Evidence]) -> Analysis:
    """Deterministic: the same alert and evidence always give the same analysis, word for word."""
    signals = score_evidence(alert, entities, evidence)
    decision = decide(category, signals, evidence)
    ranked = sorted(signals, key=lambda signal: -abs(signal.points))  # stable: ties keep rule order
    actions = recommended_actions(category, decision.disposition, evidence)
    subject = subject_entities(entities)
    for label, things in named_things(alert).items():
        subject[label] = list(dict.fromkeys([*things, *subject.get(label, [])]))
    drivers = _drivers(ranked, decision)
    named = [value for values in subject.values() for value in values]
    decisive = list(dict.fromkeys([*named, *(value for s in drivers for value in s.entities if value)]))
    return Analysis(
        verdict=decision.verdict,
        severity=decision.severity,
        disposition=decision.disposition,
        confidence=decision.confidence,
        summary=_summary(alert, category, decision, subject, drivers, actions, evidence),
        key_findings=[_finding(signal) for signal in ranked]
        + [_failure(item) for item in evidence if item.status is EvidenceStatus.ERROR],
        recommended_actions=actions,
        category=category,
        citations=[citation(signal) for signal in ranked if signal.points or signal.quote],
        decisive_entities=decisive,
    )


def subject_entities(entities: Entities) -> dict[str, list[str]]:
    """Who and what the alert is about, per kind: subject-role values first, then the next best-ranked ones
    (the affected account after the actor, the changed record after the caller's address)."""
    subject: dict[str, list[str]] = {}
    for label, kinds, limit in SUBJECT_KINDS:
        ranked = [value for kind in kinds for value in (*entities.subject(kind), *entities.of(kind))]
        values = list(dict.fromkeys(value for value in ranked if value))[:limit]
        if values:
            subject[label] = values
    return subject


#: What an alert's activity touched that is not an entity kind, by the vendors' keys (normalized), in the order a
#: summary lists them: label, keys, keys that count only under one of these parents, how many to name.
NAMED_THINGS: tuple[tuple[str, frozenset[str], frozenset[str], int], ...] = (
    ("file", frozenset({"filename", "threatname", "driverloaded", "imagefilename"}), frozenset(), 2),
    (
        "application",
        frozenset({"appdisplayname", "applicationname", "appname", "oauthappname", "apptype"}),
        frozenset(),
        2,
    ),
    ("application", frozenset({"displayname"}), frozenset({"targetresources"}), 1),
    ("group", frozenset({"group", "groupname"}), frozenset(), 1),
    ("extension", frozenset({"extensionid"}), frozenset(), 1),
    ("access key", frozenset({"accesskeyid"}), frozenset(), 1),  # an AWS key's id, not its secret
    ("sender", frozenset({"fromheader", "sender", "senderaddress", "mailfrom"}), frozenset(), 1),
    (
        "resource",
        frozenset(
            {
                "bucketname",
                "resourcename",
                "repositoryname",
                "repo",
                "sitename",
                "tablename",
                "accountalias",
                "clustername",
                "webaclname",
            }
        ),
        frozenset(),
        2,
    ),
    ("resource", frozenset({"name", "fullname"}), frozenset({"bucket", "repository", "database"}), 1),
)
#: Name/value pairs (``{"name": "app_name", "value": …}``, AWS ``{"Key": "Name", "Value": …}`` tags) whose name says
#: what the value is.
NAMED_PAIRS: dict[str, str] = {
    "appname": "application", "applicationname": "application", "apiclientname": "application", "name": "resource"
}  # fmt: skip
FILE_NAME = re.compile(r"[^/]{1,255}\.[A-Za-z0-9]{2,4}")


def named_things(alert: AlertFacts) -> dict[str, list[str]]:
    """What the alert's activity touched beyond its entities: the file, the application, the group, the bucket."""
    found: dict[str, list[str]] = {}
    limits: dict[str, int] = {}

    def add(label: str, value: str, limit: int) -> None:
        limits[label] = max(limits.get(label, 0), limit)
        found.setdefault(label, [])
        if value and value not in found[label]:
            found[label].append(value)

    for field in fields_of(alert.alert_content):
        for label, keys, parents, limit in NAMED_THINGS:
            if field.key in keys and (not parents or any(part in field.parent for part in parents)):
                value = field.value.strip()
                if label == "file":
                    base = value.replace("\\", "/").rsplit("/", 1)[-1]
                    value = base if FILE_NAME.fullmatch(base) else ""
                add(label, value, limit)
    for name, value in name_value_pairs(parsed(alert.alert_content)):
        if (pair_label := NAMED_PAIRS.get(name)) is not None:
            add(pair_label, value, 1)
    return {label: values[: limits[label]] for label, values in found.items() if values}


def _drivers(ranked: list[Signal], decision: Decision) -> list[Signal]:
    """The signals the verdict rests on: those pointing the way of the decision, strongest first."""
    benign = decision.disposition in (Disposition.FALSE_POSITIVE, Disposition.BENIGN_TRUE_POSITIVE)
    toward = [signal for signal in ranked if (signal.points < 0 if benign else signal.points > 0)]
    explaining = [signal for signal in ranked if signal.explains is not None]
    chosen = (explaining + toward) if benign else toward
    return list(dict.fromkeys(chosen))[:SUMMARY_DRIVERS]


def _finding(signal: Signal) -> str:
    text = f"[{signal.rule}] {signal.finding}"
    return f"{text} ({signal.points:+.1f})" if signal.points else text


def _failure(item: Evidence) -> str:
    return f"Step '{item.step_name}' failed: {item.error or 'no error recorded'}"


def _cite(signal: Signal) -> str:
    where = "the alert" if signal.source == ALERT_SOURCE else f"'{signal.source}'"
    locator = f" {signal.locator}" if signal.locator else ""
    quote = f': "{citation(signal).quote}"' if signal.quote else ""
    points = f" ({signal.points:+.1f})" if signal.points else ""
    return f"[{signal.rule}] {where}{locator}{quote} - {signal.finding}{points}"


def _summary(
    alert: AlertFacts,
    category: Category,
    decision: Decision,
    subject: dict[str, list[str]],
    drivers: list[Signal],
    actions: list[str],
    evidence: Sequence[Evidence],
) -> str:
    label = decision.disposition.value.replace("_", " ").capitalize()
    about = ", ".join(f"{kind} {', '.join(values)}" for kind, values in subject.items()) or "no named entity"
    parts = [
        f"{label}, {decision.severity.value} severity (confidence {decision.confidence:.0%}): "
        f"{category.value.replace('_', ' ')} alert {alert.alert_id} '{alert.alert_type}' about {about}.",
        f"Why: {decision.reason}.",
    ]
    if drivers:
        parts.append("Decisive evidence: " + "; ".join(_cite(signal) for signal in drivers) + ".")
    if decision.open_question:
        parts.append(f"Open question: {decision.open_question}")
    if actions:
        parts.append("Recommended: " + "; ".join(actions[:SUMMARY_ACTIONS]) + ".")
    ok = sum(item.status is EvidenceStatus.OK for item in evidence)
    failed = sum(item.status is EvidenceStatus.ERROR for item in evidence)
    skipped = sum(item.status is EvidenceStatus.SKIPPED for item in evidence)
    tail = f"{ok} of {len(evidence)} steps returned evidence"
    if failed or skipped:
        tail += f" ({failed} failed, {skipped} skipped)"
    parts.append(tail + ".")
    return " ".join(parts)
