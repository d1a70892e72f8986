"""Signals -> the written analysis: a summary that names the subject and quotes the decisive evidence."""

from __future__ import annotations

from collections.abc import Sequence

from vigil.ai.builtin.actions import recommended_actions
from vigil.ai.builtin.citations import citation
from vigil.ai.builtin.decision import Decision, decide
from vigil.ai.builtin.document import fields_of
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
    resource = resources_of(alert)
    if resource:
        subject["resource"] = resource
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


RESOURCE_KEYS = frozenset({"bucketname", "resourcename", "repositoryname", "repo", "sitename", "tablename"})
RESOURCE_PARENTS = ("bucket", "repository", "database")
RESOURCES = 2


def resources_of(alert: AlertFacts) -> list[str]:
    """What the alert's activity touched that is not an entity kind: a bucket, a repository, a site."""
    found = [
        field.value
        for field in fields_of(alert.alert_content)
        if field.key in RESOURCE_KEYS or (field.key == "name" and any(p in field.parent for p in RESOURCE_PARENTS))
    ]
    return list(dict.fromkeys(found))[:RESOURCES]


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
