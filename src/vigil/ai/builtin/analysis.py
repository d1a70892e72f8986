"""Signals → verdict, severity, disposition, confidence and the written summary (docs/analyst.md)."""

from __future__ import annotations

from collections.abc import Sequence

from vigil.ai.builtin.actions import recommended_actions
from vigil.ai.builtin.scoring import Signal, checkpoint_answer, score_evidence
from vigil.ai.schemas import (
    AlertFacts,
    Analysis,
    Category,
    CheckpointAnswer,
    Disposition,
    Evidence,
    EvidenceKind,
    EvidenceStatus,
    Severity,
    Verdict,
)
from vigil.investigations.entities import Entities

MALICIOUS_AT = 5.0
SUSPICIOUS_AT = 2.0
BENIGN_AT = -1.5
CRITICAL_AT = 8.0
#: |score| at which the evidence counts as fully decisive for confidence.
DECISIVE_SCORE = 6.0
CONFIDENCE_FLOOR = 0.3
CONFIDENCE_CEILING = 0.95
SUMMARY_DRIVERS = 3


def analyze(alert: AlertFacts, category: Category, entities: Entities, evidence: Sequence[Evidence]) -> Analysis:
    """Deterministic: the same alert and evidence always give the same analysis, word for word."""
    signals = score_evidence(alert, entities, evidence)
    score = round(sum(signal.points for signal in signals), 2)
    verdict = _verdict(score)
    disposition = _disposition(verdict, evidence)
    unusable = [item.step_name for item in evidence if item.status is not EvidenceStatus.OK]
    confidence = _confidence(score, evidence)
    ranked = sorted(signals, key=lambda signal: -abs(signal.points))  # stable: ties keep rule order
    return Analysis(
        verdict=verdict,
        severity=_severity(verdict, score),
        disposition=disposition,
        confidence=confidence,
        summary=_summary(verdict, category, score, confidence, ranked, evidence),
        key_findings=[_finding(signal) for signal in ranked]
        + [_failure(item) for item in evidence if item.status is EvidenceStatus.ERROR],
        recommended_actions=recommended_actions(category, verdict, disposition, unusable),
        category=category,
    )


def _verdict(score: float) -> Verdict:
    if score >= MALICIOUS_AT:
        return Verdict.MALICIOUS
    if score >= SUSPICIOUS_AT:
        return Verdict.SUSPICIOUS
    if score <= BENIGN_AT:
        return Verdict.BENIGN
    return Verdict.INCONCLUSIVE


def _severity(verdict: Verdict, score: float) -> Severity:
    if verdict is Verdict.MALICIOUS:
        return Severity.CRITICAL if score >= CRITICAL_AT else Severity.HIGH
    return {
        Verdict.SUSPICIOUS: Severity.MEDIUM,
        Verdict.INCONCLUSIVE: Severity.LOW,
        Verdict.BENIGN: Severity.INFORMATIONAL,
    }[verdict]


def _disposition(verdict: Verdict, evidence: Sequence[Evidence]) -> Disposition:
    """Benign activity the user vouched for is a benign true positive; otherwise the detection was wrong."""
    if verdict is Verdict.MALICIOUS:
        return Disposition.TRUE_POSITIVE
    if verdict is Verdict.BENIGN:
        confirmed = any(
            item.kind is EvidenceKind.CHECKPOINT and checkpoint_answer(item) is CheckpointAnswer.CONFIRMED
            for item in evidence
        )
        return Disposition.BENIGN_TRUE_POSITIVE if confirmed else Disposition.FALSE_POSITIVE
    return Disposition.PENDING


def _confidence(score: float, evidence: Sequence[Evidence]) -> float:
    """Stronger scores raise confidence; steps that failed or were skipped pull it down proportionally."""
    coverage = sum(item.status is EvidenceStatus.OK for item in evidence) / len(evidence) if evidence else 0.0
    strength = min(1.0, abs(score) / DECISIVE_SCORE)
    raw = (CONFIDENCE_FLOOR + (1 - CONFIDENCE_FLOOR) * strength) * (0.5 + 0.5 * coverage)
    return round(min(CONFIDENCE_CEILING, raw), 2)


def _finding(signal: Signal) -> str:
    return f"{signal.finding} ({signal.points:+.1f})" if signal.points else signal.finding


def _failure(item: Evidence) -> str:
    return f"Step '{item.step_name}' failed: {item.error or 'no error recorded'}"


def _summary(
    verdict: Verdict,
    category: Category,
    score: float,
    confidence: float,
    ranked: list[Signal],
    evidence: Sequence[Evidence],
) -> str:
    label = category.value.replace("_", " ")
    head = f"{verdict.value.capitalize()} {label} alert (score {score:+.1f}, confidence {confidence:.0%})."
    drivers = [signal for signal in ranked if signal.points][:SUMMARY_DRIVERS]
    if drivers:
        reasons = "; ".join(_finding(signal) for signal in drivers)
        body = f" Driven by: {reasons}."
    else:
        body = " No evidence pointed either way."
    ok = sum(item.status is EvidenceStatus.OK for item in evidence)
    failed = sum(item.status is EvidenceStatus.ERROR for item in evidence)
    skipped = sum(item.status is EvidenceStatus.SKIPPED for item in evidence)
    tail = f" {ok} of {len(evidence)} steps returned evidence"
    if failed or skipped:
        tail += f" ({failed} failed, {skipped} skipped)"
    return head + body + tail + "."
