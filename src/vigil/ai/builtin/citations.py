"""A signal as the case shows it: the citation behind the verdict, its quote cut to a readable length."""

from __future__ import annotations

from vigil.ai.schemas import Citation
from vigil.evidence.signals import Signal

#: Quotes in citations are cut to this many characters (a command line can be kilobytes).
QUOTE_CHARS = 300


def citation(signal: Signal) -> Citation:
    return Citation(
        rule=signal.rule,
        source=signal.source,
        skill_id=signal.skill_id,
        locator=signal.locator,
        quote=shorten(signal.quote),
        finding=signal.finding,
        points=signal.points,
    )


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line, at most `limit` characters, so a quote stays readable in a summary and a table cell."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
