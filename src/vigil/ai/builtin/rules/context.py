"""Rules over Vigil's own evidence: related alerts on the same subject, and what the person answered (R, K)."""

from __future__ import annotations

from vigil.ai.schemas import CheckpointAnswer, Evidence
from vigil.core.entities import Entities
from vigil.evidence import records as read
from vigil.evidence.signals import AlertFacts, Explains, Signal, StepOutput

RELATED_MANY = 3
DENIED_POINTS = 5.0
CONFIRMED_POINTS = -3.0


def related_alerts(item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
    """Earlier alerts about the same subject (user, host, address) in the organization: a pattern, not a one-off."""
    related = read.count(item.output)
    records = read.records(item.output)
    if not related or not records:
        return []
    top = records[0]
    reason = read.raw(top, "reason") or "shares a subject entity"
    quote = f"{read.raw(top, 'alert_id')} {read.raw(top, 'alert_type')}: {reason}"
    shared = read.nested(top, "shared")
    values = tuple(
        str(value) for kind_values in shared.values() if isinstance(kind_values, list) for value in kind_values
    )
    points = 2.0 if related >= RELATED_MANY else 1.0
    finding = f"{related} earlier alert(s) in 30 days concern the same subject, e.g. {quote}"
    return [Signal.from_step(item, "R1", points, finding, "alerts[0].reason", quote, entities=values[:3])]


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
