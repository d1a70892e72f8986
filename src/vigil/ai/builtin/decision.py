"""Signals -> disposition, verdict, severity and confidence: the analyst's judgement, in documented order.

1. The person says it was not them -> true positive.
2. A trusted source says the detection is wrong (vendor classification, admin tags for security testing,
   a sample finding, the EICAR test file) -> false positive; says it is expected activity -> benign TP.
3. The person confirmed and nothing contradicts them: benign true positive, unless the score after their
   answer still reaches 4 (pending: the evidence and the person disagree, the summary asks the question).
4. Suspicious evidence (score >= 2) against substantial benign context (non-explaining signals summing to
   -2 or less, e.g. a session that is plainly the user's own) is a conflict: pending, with the question.
5. Otherwise the score (sum of points) decides: >= 4 true positive; 2-4 true positive of medium severity;
   the vendor's own rating is the floor of a true positive's severity, and an alert the vendor rates high or
   critical stays a true positive unless cited evidence explains it (steps 1-3); below 2 benign: benign true
   positive when the alert reports an activity (a sign-in, a change) that
   showed no sign of abuse, false positive when a detection claimed something the evidence does not support
   (including an identity provider's risk claim that the rest of the evidence argues against).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vigil.ai.schemas import Disposition, Evidence, EvidenceStatus, Severity, Verdict
from vigil.evidence.knowledge import Category
from vigil.evidence.signals import Explains, Signal

TRUE_POSITIVE_AT = 4.0
SUSPICIOUS_AT = 2.0
#: Benign context (not an explanation) at least this strong, against a suspicious score, is a real conflict.
CONFLICT_AT = -2.0
#: Benign context that argues against compromise without explaining the activity.
CONTEXT_RULES = frozenset({"S6", "O2"})
CRITICAL_AT = 9.0
IMPACT_RULES = frozenset({"H1", "H2", "H5", "H10", "D3", "A4"})
RANSOMWARE_POINTS = 3.0
#: ATT&CK tactics whose success is damage already done (stolen secrets, data out, escalated rights, spread,
#: destruction): a true positive showing one is at least high.
HIGH_TACTICS = frozenset({"credential-access", "exfiltration", "impact", "privilege-escalation", "lateral-movement"})
#: A security control turned down (logging stopped, MFA removed): at least high once it is malicious.
CONTROL_DOWN_RULES = frozenset({"C2"})
#: Findings that leave the intruder a way back in: new credentials, an admin grant, a new token.
FOOTHOLD_RULES = frozenset({"C5", "C6"})
#: A malicious application holding high-risk permissions (mail, files, the directory) is at least high.
HIGH_GRANT_POINTS = 2.0
#: Categories whose alerts report an activity (it happened); the rest are detections (a claim about it).
ACTIVITY_CATEGORIES = frozenset({Category.IDENTITY_SIGNIN, Category.ACCOUNT_CHANGE, Category.EDGE_WAF_CHANGE})
SEVERITY_ORDER = list(Severity)
#: The identity provider's own risk claim about a sign-in (risky address, unfamiliar place, spray): when the rest of
#: the evidence pulls the score below the claim, the detection was wrong (false positive), not merely harmless.
RISK_CLAIMS = frozenset({"S1"})
CONFIDENCE_CEILING = 0.95


@dataclass(frozen=True)
class Decision:
    disposition: Disposition
    verdict: Verdict
    severity: Severity
    confidence: float
    reason: str
    open_question: str | None = None


def decide(category: Category, signals: Sequence[Signal], evidence: Sequence[Evidence]) -> Decision:
    score = round(sum(signal.points for signal in signals), 2)
    coverage = _coverage(evidence)
    denied = _first(signals, "K1")
    if denied is not None:
        return _true_positive(signals, score, coverage, f"{denied.finding}", floor=Severity.HIGH)
    trusted = [signal for signal in signals if signal.explains is not None and signal.rule != "K2"]
    wrong = next((signal for signal in trusted if signal.explains is Explains.WRONG_DETECTION), None)
    if wrong is not None:
        return _benign(Disposition.FALSE_POSITIVE, wrong, coverage)
    expected = next((signal for signal in trusted if signal.explains is Explains.AUTHORISED), None)
    if expected is not None:
        return _benign(Disposition.BENIGN_TRUE_POSITIVE, expected, coverage)
    confirmed = _first(signals, "K2")
    if confirmed is not None:
        if score < TRUE_POSITIVE_AT:
            return _benign(Disposition.BENIGN_TRUE_POSITIVE, confirmed, coverage)
        question = (
            f"{confirmed.finding}, yet {_lower(_strongest(signals).finding)}: does the user's explanation cover "
            "it? Confirm with the user's manager or the change record before closing."
        )
        return _pending("the evidence and the person's answer disagree", question, coverage)
    against = [signal for signal in signals if signal.rule in CONTEXT_RULES and signal.points < 0]
    if score >= SUSPICIOUS_AT and sum(signal.points for signal in against) <= CONFLICT_AT:
        doubt = min(against, key=lambda s: s.points)
        question = (
            f"{_strongest(signals).finding}, yet {_lower(doubt.finding)}: was this sanctioned work? "
            "Ask the user or the data owner before closing."
        )
        return _pending("the evidence points both ways", question, coverage)
    if score >= TRUE_POSITIVE_AT:
        return _true_positive(signals, score, coverage, "the evidence adds up to malicious activity")
    if score >= SUSPICIOUS_AT:
        return _true_positive(signals, score, coverage, "suspicious evidence and nothing that explains it")
    rating = _vendor_floor(signals)
    if rating is not None and SEVERITY_ORDER.index(rating) >= SEVERITY_ORDER.index(Severity.HIGH):
        because = (
            f"the vendor rates the alert {rating.value} and no evidence explains it away; "
            "a high rating is only lowered for a cited reason"
        )
        return _true_positive(signals, score, coverage, because)
    claim = next((signal for signal in signals if signal.rule in RISK_CLAIMS and signal.points > 0), None)
    if category in ACTIVITY_CATEGORIES and claim is not None and score < claim.points:
        refuted = f"the evidence does not bear out the claim ({_lower(claim.finding)}): it argues against it"
        reason = Signal(rule="B3", points=0.0, finding=refuted)
        return _benign(Disposition.FALSE_POSITIVE, reason, coverage, strength=max(0.0, SUSPICIOUS_AT - score))
    if category in ACTIVITY_CATEGORIES:
        reason = Signal(rule="B1", points=0.0, finding="the reported activity shows no sign of abuse")
        return _benign(Disposition.BENIGN_TRUE_POSITIVE, reason, coverage, strength=max(0.0, SUSPICIOUS_AT - score))
    reason = Signal(rule="B2", points=0.0, finding="no evidence supports what the detection claims")
    return _benign(Disposition.FALSE_POSITIVE, reason, coverage, strength=max(0.0, SUSPICIOUS_AT - score))


def _vendor_floor(signals: Sequence[Signal]) -> Severity | None:
    """The vendor's own rating: nothing explains the alert here, so the severity goes no lower than it."""
    ratings = [Severity(signal.vendor_severity) for signal in signals if signal.vendor_severity]
    return max(ratings, key=SEVERITY_ORDER.index) if ratings else None


def _pending(reason: str, question: str, coverage: float) -> Decision:
    return Decision(
        Disposition.PENDING, Verdict.SUSPICIOUS, Severity.MEDIUM, _confidence(0.4, coverage), reason, question
    )


def _strongest(signals: Sequence[Signal]) -> Signal:
    return max((signal for signal in signals if signal.points > 0), key=lambda signal: signal.points)


def _lower(sentence: str) -> str:
    """A finding continued inside a sentence: its first letter lower-cased."""
    return sentence[:1].lower() + sentence[1:]


def _first(signals: Sequence[Signal], rule: str) -> Signal | None:
    return next((signal for signal in signals if signal.rule == rule), None)


def _true_positive(
    signals: Sequence[Signal], score: float, coverage: float, reason: str, floor: Severity = Severity.MEDIUM
) -> Decision:
    if score >= CRITICAL_AT and any(_has_impact(signal) for signal in signals):
        severity = Severity.CRITICAL
    elif score >= TRUE_POSITIVE_AT:
        severity = Severity.HIGH
    else:
        severity = Severity.MEDIUM
    if any(signal.asset_value for signal in signals):
        severity = _raise(severity)
    for minimum in (floor, _vendor_floor(signals), _impact_floor(signals)):
        if minimum is not None and SEVERITY_ORDER.index(severity) < SEVERITY_ORDER.index(minimum):
            severity = minimum
    confidence = _confidence(0.55 + 0.05 * min(score, 8.0), coverage)
    return Decision(Disposition.TRUE_POSITIVE, Verdict.MALICIOUS, severity, confidence, reason)


def _benign(disposition: Disposition, because: Signal, coverage: float, strength: float | None = None) -> Decision:
    severity = Severity.INFORMATIONAL if disposition is Disposition.FALSE_POSITIVE else Severity.LOW
    weight = abs(because.points) if strength is None else strength
    return Decision(
        disposition,
        Verdict.BENIGN,
        severity,
        _confidence(0.5 + 0.08 * min(weight, 5.0), coverage),
        because.finding,
    )


def _impact_floor(signals: Sequence[Signal]) -> Severity | None:
    """What the malicious activity achieved sets a floor, whatever the score: ransomware, or a takeover that left a
    foothold (the person denies it, or a new admin and new credentials together), is critical; stolen secrets,
    escalation, spread, data out, a control turned down or an app granted high-risk permissions is high."""
    firing = [signal for signal in signals if signal.points > 0]
    rules = {signal.rule for signal in firing}
    footholds = {signal.finding for signal in firing if signal.rule in FOOTHOLD_RULES}
    ransomware = any(signal.rule == "A2" and signal.points >= RANSOMWARE_POINTS for signal in firing)
    if ransomware or (footholds and "K1" in rules) or len(footholds) >= FOOTHOLDS_FOR_BACKDOOR:
        return Severity.CRITICAL
    broad_grant = any(signal.rule == "G2" and signal.points >= HIGH_GRANT_POINTS for signal in firing)
    if _control_down(firing) or broad_grant or any(set(signal.tactics) & HIGH_TACTICS for signal in firing):
        return Severity.HIGH
    return None


FOOTHOLDS_FOR_BACKDOOR = 2


def _control_down(firing: Sequence[Signal]) -> bool:
    """A control turned down that a record shows, or that the vendor both reports and classifies (GuardDuty's
    Stealth:IAMUser/CloudTrailLoggingDisabled); an alert title alone stays a claim of medium weight."""
    downs = [signal for signal in firing if signal.rule in CONTROL_DOWN_RULES]
    seen = any(signal.locator != "alert_type" for signal in downs)
    classified = bool(downs) and any(signal.rule == "A2" for signal in firing)
    return seen or classified


def _has_impact(signal: Signal) -> bool:
    """Critical is kept for impact: ransomware, credential theft, spread, offensive tooling, high-value assets."""
    return signal.points > 0 and (
        signal.rule in IMPACT_RULES or (signal.rule == "A2" and signal.points >= RANSOMWARE_POINTS)
    )


def _raise(severity: Severity) -> Severity:
    return SEVERITY_ORDER[min(len(SEVERITY_ORDER) - 1, SEVERITY_ORDER.index(severity) + 1)]


def _coverage(evidence: Sequence[Evidence]) -> float:
    if not evidence:
        return 0.0
    return sum(item.status is EvidenceStatus.OK for item in evidence) / len(evidence)


def _confidence(base: float, coverage: float) -> float:
    """Failed or skipped steps pull confidence down: up to a third when nothing ran."""
    return round(min(CONFIDENCE_CEILING, base * (2 + coverage) / 3), 2)
