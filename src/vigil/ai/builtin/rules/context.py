"""Rules over Vigil's own evidence: related alerts on the same subject, and what the person answered (R, K)."""

from __future__ import annotations

from typing import Any

from vigil.ai.schemas import CheckpointAnswer, Evidence
from vigil.core.entities import Entities
from vigil.evidence import records as read
from vigil.evidence.signals import AlertFacts, Explains, Signal, StepOutput

DENIED_POINTS = 5.0
CONFIRMED_POINTS = -3.0
#: Related alerts already concluded malicious: one kind / two or more kinds of alert on the same subject.
RELATED_CONFIRMED_POINTS = (1.0, 2.0)
#: Related alerts not yet concluded, per distinct kind, at most `RELATED_OPEN_CAP`: they amplify suspicion the
#: other evidence already raised (scoring.py drops them otherwise), so alerts about one busy user cannot make
#: each other malicious.
RELATED_OPEN_POINTS = 0.5
RELATED_OPEN_CAP = 1.0
RELATED_CONFIRMED_RULE = "R1"
RELATED_OPEN_RULE = "R2"


def related_alerts(item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
    """Earlier alerts about the same subject (user, host, address): a pattern only when they are of different
    kinds and, to count in full, already concluded malicious. Twenty copies of one alert are one kind; an alert
    closed as benign says nothing against this one."""
    records = read.records(item.output)
    if not records:
        return []
    own_kind = f"{alert.alert_provider}:{alert.alert_type}".lower()
    confirmed: dict[str, dict[str, Any]] = {}
    open_: dict[str, dict[str, Any]] = {}
    for record in records:
        kind = f"{read.raw(record, 'alert_provider')}:{read.raw(record, 'alert_type')}".lower()
        disposition = read.raw(record, "disposition")
        if disposition == "true_positive":
            confirmed.setdefault(kind, record)
        elif disposition in ("", "pending") and kind != own_kind:  # an open copy of this alert adds nothing
            open_.setdefault(kind, record)
    signals: list[Signal] = []
    if confirmed:
        points = RELATED_CONFIRMED_POINTS[min(len(confirmed), 2) - 1]
        finding = f"{_kinds(confirmed)} about the same subject were already found malicious, e.g. {_quote(confirmed)}"
        signals.append(_related(item, RELATED_CONFIRMED_RULE, points, finding, confirmed))
    if open_:
        points = min(RELATED_OPEN_CAP, RELATED_OPEN_POINTS * len(open_))
        finding = f"{_kinds(open_)} about the same subject are still open, e.g. {_quote(open_)}"
        signals.append(_related(item, RELATED_OPEN_RULE, points, finding, open_))
    return signals


def _kinds(found: dict[str, dict[str, Any]]) -> str:
    return f"{len(found)} other kind(s) of alert in 30 days"


def _quote(found: dict[str, dict[str, Any]]) -> str:
    top = next(iter(found.values()))
    reason = read.raw(top, "reason") or "shares a subject entity"
    return f"{read.raw(top, 'alert_id')} {read.raw(top, 'alert_type')}: {reason}"


def _related(item: StepOutput, rule: str, points: float, finding: str, found: dict[str, dict[str, Any]]) -> Signal:
    top = next(iter(found.values()))
    shared = read.nested(top, "shared")
    values = tuple(
        str(value) for kind_values in shared.values() if isinstance(kind_values, list) for value in kind_values
    )
    return Signal.from_step(item, rule, points, finding, "alerts[0].reason", _quote(found), entities=values[:3])


def checkpoint_answer(item: Evidence) -> CheckpointAnswer | None:
    """The recorded answer of a checkpoint step (``output.answer``), None when missing or unknown."""
    try:
        return CheckpointAnswer(read.text(item.output or {}, "answer"))
    except ValueError:
        return None


def checkpoint(item: Evidence) -> list[Signal]:
    answer = checkpoint_answer(item)
    output = item.output or {}
    who = read.raw(output, "answered_by") or read.raw(output, "asked_user_email") or "the user"
    if answer is CheckpointAnswer.DENIED:
        return [_answer(item, who, "K1", DENIED_POINTS, f"{who} answered that it was NOT them", "denied")]
    if answer is CheckpointAnswer.CONFIRMED:
        finding = f"{who} confirmed the activity was them"
        return [_answer(item, who, "K2", CONFIRMED_POINTS, finding, "confirmed", Explains.AUTHORISED)]
    if answer is CheckpointAnswer.TIMEOUT:
        return [_answer(item, who, "K3", 0.0, f"No answer from {who} before the checkpoint timed out", "timeout")]
    return []


def _answer(
    item: Evidence, who: str, rule: str, points: float, finding: str, quote: str, explains: Explains | None = None
) -> Signal:
    return Signal.from_step(item.step(), rule, points, finding, "answer", quote, explains=explains, entities=(who,))
