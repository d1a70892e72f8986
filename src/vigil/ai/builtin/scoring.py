"""Evidence -> signals: every rule that fired, with points and the evidence it cites (docs/analyst.md).

Order: the alert's own fields, every successful skill step, then the person's answer. Two adjustments
follow, both documented: a confirmation that the evidence contradicts is noted but does not count (X2),
and malicious evidence from two or more independent sources earns a corroboration bonus (X1).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from vigil.ai.builtin import vendor_knowledge
from vigil.ai.builtin.decision import SUSPICIOUS_AT
from vigil.ai.builtin.document import fields_of, parsed
from vigil.ai.builtin.injection import find_injection, injection_signal
from vigil.ai.builtin.rules import dual_use, sigma
from vigil.ai.builtin.rules.alert import alert_rules
from vigil.ai.builtin.rules.context import RELATED_OPEN_RULE, checkpoint
from vigil.ai.builtin.rules.context_lists import list_rules
from vigil.ai.schemas import Evidence, EvidenceKind, EvidenceStatus
from vigil.core.entities import Entities
from vigil.evidence.signals import ALERT_SOURCE, AlertFacts, Signal
from vigil.knowledge.attack import tactics_of

#: Behaviours a "yes, that was me" cannot explain: credential theft, ransomware, offensive tools, disabled
#: defences, other alerts on and spread to other machines; vendor folders add theirs. (Injected text is never
#: decisive, so it does not undo a confirmation either: the same alert without it must end the same way.)
CONTRADICTING_RULES = frozenset({"H1", "H2", "H5", "H9", "H10", "D1", "D3"})
#: Tactics whose success the person cannot vouch for: credentials taken are taken whoever clicked.
UNCONFIRMABLE_TACTICS = frozenset({"credential-access"})
#: ATT&CK techniques of a lure: phishing, user execution, stolen application access tokens (consent phishing).
LURE_TECHNIQUES = ("T1566", "T1204", "T1528")
#: A grant of high-risk permissions to a third-party application: what consent phishing asks the user to click.
LURE_RULES = frozenset({"G2"})
#: Explanations an attacker can imitate (process names) or that are one word an admin typed (a tag, a label):
#: they never outweigh a strong behaviour, so no single tag clears an alert other evidence condemns.
WEAK_EXPLANATIONS = frozenset(
    {"A6", "A7", "A8", "D4", "H2", "I4", "C14", "L4", "L8", "O1", "O2", "O3", "O5", "O6", "O7"}
)
WEAK_EXPLANATIONS |= dual_use.WEAK_EXPLANATIONS
STRONG_BEHAVIOURS = frozenset({"H1", "H2", "H5", "H9", "H10"})
CORROBORATING_POINTS = 1.0
#: Rules that describe one fact whichever source shows it (behaviours, connections): counted once; vendor
#: folders add theirs.
FACT_RULES = frozenset({f"H{n}" for n in range(1, 11)} | {"N1", "S3", "S4", "S5", "U1"})
CORROBORATION_BONUS = 1.0
#: A source's positive points are capped at this many times its strongest signal.
SOURCE_CAP_FACTOR = 2.0
SOURCE_CAP_FLOOR = 5.0
#: The person's answer and the adjustments computed over all sources are not one source's claims.
UNCAPPED = frozenset({"K1", "X1", "X3"})
CHAIN_MIN_POINTS = 0.5
CHAIN_POINTS = 1.0
CHAIN_CAP = 2.0
#: Signals that only amplify suspicion raised elsewhere (open related alerts on the same subject).
AMPLIFIERS = frozenset({RELATED_OPEN_RULE})


def score_evidence(alert: AlertFacts, entities: Entities, evidence: Sequence[Evidence]) -> list[Signal]:
    signals = alert_rules(alert) + list_rules(alert, entities)
    document = parsed(alert.alert_content)
    for reader in vendor_knowledge.alert_readers():
        signals.extend(reader(alert, document))
    for item in evidence:
        if item.kind is EvidenceKind.SKILL and item.status is EvidenceStatus.OK:
            signals.extend(vendor_knowledge.read_step(item, alert, entities))
            signals.extend(_injection_in(item))
    signals.extend(sigma.sigma_signals(alert, document, evidence, entities))
    signals.extend(dual_use.dual_use_signals(alert, document, evidence, entities))
    answers = [
        signal
        for item in evidence
        if item.kind is EvidenceKind.CHECKPOINT and item.status is EvidenceStatus.OK
        for signal in checkpoint(item)
    ]
    signals = _count_vendor_claim_once(_count_facts_once(_withdraw_contradicted_explanations(signals)))
    signals = _cap_per_source(_amplifiers_need_suspicion(signals))
    signals = [replace(s, tactics=tactics_of(s.techniques)) if s.techniques and not s.tactics else s for s in signals]
    signals.extend(_weigh_confirmations(answers, signals))
    signals.extend(_corroboration(signals))
    signals.extend(_tactic_chain(signals))
    return signals


def _injection_in(item: Evidence) -> list[Signal]:
    """Vendor data is attacker-writable too (a DNS comment, a commit message in an audit log): flagged like the
    alert's own text, once per step."""
    if not item.output:
        return []
    found = find_injection(fields_of(json.dumps(item.output, default=str)))
    return [injection_signal(found, item.step())] if found else []


def _withdraw_contradicted_explanations(signals: list[Signal]) -> list[Signal]:
    """Weak explanations (a deployment agent, the platform agent's metadata reads) yield to strong behaviours:
    credential dumping started by CcmExec is still credential dumping. The alert's own claim of a metadata
    read is what the agent explanation explains, so only a read seen by a step withdraws that one."""

    def contradiction(explanation: Signal) -> Signal | None:
        return next(
            (
                s
                for s in signals
                if s.points > 0
                and s.rule in STRONG_BEHAVIOURS
                and not (explanation.rule == s.rule == "H2" and s.source == ALERT_SOURCE)
                and not _names_the_approved_tool(explanation, s)
            ),
            None,
        )

    withdrawn: list[Signal] = []
    for signal in signals:
        against = contradiction(signal) if signal.rule in WEAK_EXPLANATIONS and signal.points < 0 else None
        if against is None:
            withdrawn.append(signal)
            continue
        withdrawn.append(_withdrawn(signal, against))
    return withdrawn


def _names_the_approved_tool(explanation: Signal, behaviour: Signal) -> bool:
    """An approved offensive tool (the red team's SharpHound) is the behaviour its approval explains."""
    tool = explanation.quote.strip().lower().removesuffix(".exe")
    return explanation.rule == "O7" and bool(tool) and tool in f"{behaviour.quote} {behaviour.finding}".lower()


def _withdrawn(signal: Signal, against: Signal, rule: str | None = None) -> Signal:
    """`signal` no longer counts nor explains anything because of `against`; both stay in the findings."""
    finding = f"{signal.finding}, but the evidence contradicts it: {against.finding}"
    return replace(signal, rule=rule or signal.rule, points=0.0, explains=None, finding=finding)


def _count_facts_once(signals: list[Signal]) -> list[Signal]:
    """A behaviour seen by the alert and by two hunting queries is one fact: the strongest sighting counts,
    the others stay cited with no points ("also seen")."""
    facts = FACT_RULES | vendor_knowledge.counted_once() | sigma.counted_once(signals)
    strongest: dict[str, Signal] = {}
    for signal in signals:
        if signal.rule in facts and signal.points > strongest.get(signal.rule, signal).points:
            strongest[signal.rule] = signal
        strongest.setdefault(signal.rule, signal)
    counted: list[Signal] = []
    for signal in signals:
        if signal.rule in facts and signal is not strongest[signal.rule]:
            counted.append(replace(signal, points=0.0, finding=f"{signal.finding} (also seen, counted once)"))
        else:
            counted.append(signal)
    return counted


def _count_vendor_claim_once(signals: list[Signal]) -> list[Signal]:
    """The vendor's category (A2) and its MITRE techniques (A3) are one claim about the alert: the larger counts."""
    claims = [signal for signal in signals if signal.rule in ("A2", "A3") and signal.points > 0]
    if len(claims) < 2:
        return signals
    keep = max(claims, key=lambda signal: signal.points)
    return [
        replace(signal, points=0.0, finding=f"{signal.finding} (the same vendor claim, counted once)")
        if signal in claims and signal is not keep
        else signal
        for signal in signals
    ]


def _amplifiers_need_suspicion(signals: list[Signal]) -> list[Signal]:
    """Open related alerts (R2) only strengthen what the other evidence already suspects: alone they would let
    alerts about one busy user make each other malicious."""
    rest = sum(signal.points for signal in signals if signal.rule not in AMPLIFIERS)
    if rest >= SUSPICIOUS_AT:
        return signals
    return [
        replace(signal, points=0.0, finding=f"{signal.finding} (context only: nothing else here is suspicious)")
        if signal.rule in AMPLIFIERS and signal.points > 0
        else signal
        for signal in signals
    ]


def _cap_per_source(signals: list[Signal]) -> list[Signal]:
    """One source says one thing loudly at most twice: a step's positive points are capped at `SOURCE_CAP_FACTOR`
    times its strongest signal (at least `SOURCE_CAP_FLOOR`), so six rules reading one hunting result do not
    outweigh a chain seen by several sources (risk-based alerting's per-source cap). The alert's own fields are
    distinct vendor claims, each already counted once, and the person's answer is never capped."""
    room: dict[str, float] = {}
    for signal in signals:
        if signal.points > 0:
            cap = max(SOURCE_CAP_FLOOR, SOURCE_CAP_FACTOR * signal.points)
            room[signal.source] = max(room.get(signal.source, 0.0), cap)
    capped = list(signals)
    for index in sorted(range(len(signals)), key=lambda i: -signals[i].points):
        signal = signals[index]
        if signal.points <= 0 or signal.rule in UNCAPPED or signal.source == ALERT_SOURCE:
            continue
        left = room[signal.source]
        kept = round(min(signal.points, left), 2)
        room[signal.source] = left - kept
        if kept != signal.points:
            capped[index] = _trimmed(signal, kept)
    return capped


def _trimmed(signal: Signal, kept: float) -> Signal:
    return replace(signal, points=kept, finding=f"{signal.finding} (capped: its source already said this much)")


def _tactic_chain(signals: list[Signal]) -> list[Signal]:
    """Distinct ATT&CK tactics across the evidence (initial access -> execution -> credential access) outweigh
    many hits of one kind: a chain earns `CHAIN_POINTS` per tactic beyond the second, up to `CHAIN_CAP`."""
    tactics = sorted({t for signal in signals if signal.points >= CHAIN_MIN_POINTS for t in signal.tactics})
    extra = len(tactics) - 2
    if extra <= 0:
        return []
    listed = ", ".join(tactics)
    points = min(CHAIN_CAP, CHAIN_POINTS * extra)
    return [
        Signal(
            rule="X3",
            points=points,
            finding=f"The evidence spans {len(tactics)} ATT&CK tactics ({listed})",
            quote=listed,
        )
    ]


def _weigh_confirmations(answers: list[Signal], signals: list[Signal]) -> list[Signal]:
    """ "Yes, that was me" says the person acted, not that the act was safe: it does not explain behaviours no
    user performs knowingly (credential theft, spread), nor an alert about a lure, which the deceived person
    confirms just the same (user execution, phishing, consent phishing, credentials taken)."""
    contradicting = CONTRADICTING_RULES | vendor_knowledge.undeniable()
    contradiction = next(
        (
            signal
            for signal in signals
            if (signal.points > 0 and signal.rule in contradicting) or (signal.points >= 0 and _lure_or_theft(signal))
        ),
        None,
    )
    return [
        _withdrawn(answer, contradiction, rule="X2") if answer.rule == "K2" and contradiction is not None else answer
        for answer in answers
    ]


def _lure_or_theft(signal: Signal) -> bool:
    """The vendor's techniques (even when counted once with its category) say a lure or a theft."""
    return (
        signal.rule in LURE_RULES
        or bool(set(signal.tactics) & UNCONFIRMABLE_TACTICS)
        or any(technique.startswith(LURE_TECHNIQUES) for technique in signal.techniques)
    )


def _corroboration(signals: list[Signal]) -> list[Signal]:
    """Two independent sources saying the same thing count for more than either alone."""
    sources = sorted({signal.source for signal in signals if signal.points >= CORROBORATING_POINTS})
    if len(sources) < 2:
        return []
    listed = ", ".join(sources)
    return [
        Signal(
            rule="X1",
            points=CORROBORATION_BONUS,
            finding=f"Malicious evidence is corroborated by {len(sources)} independent sources ({listed})",
            locator="",
            quote=listed,
        )
    ]
