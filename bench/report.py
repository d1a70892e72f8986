"""What every benchmark returns: figures with their runs and target, so one writer can put them side by side.

A figure is the median of its runs with min-max beside it; ``target`` is the goal as text and ``met`` says
whether the median reaches it (None: the row has no target and is context, e.g. the bare baseline).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field


@dataclass
class Figure:
    section: str
    """Table the row belongs to, e.g. "E1 intake (PostgreSQL)"."""
    name: str
    """What was measured, e.g. "Vigil E1, untyped: alerts/s at saturation"."""
    unit: str
    """"alerts/s", "ms", "MB", "×" …"""
    runs: list[float] = field(default_factory=list)
    target: str = ""
    """The goal as a reader sees it, e.g. "≥ 1,000" or "≤ 50"; empty for context rows."""
    met: bool | None = None
    note: str = ""
    """Why a target is missed (with profile evidence), or how the figure was taken."""

    @property
    def median(self) -> float:
        return statistics.median(self.runs) if self.runs else float("nan")

    @property
    def low(self) -> float:
        return min(self.runs) if self.runs else float("nan")

    @property
    def high(self) -> float:
        return max(self.runs) if self.runs else float("nan")

    def judge_at_least(self, goal: float) -> Figure:
        """Set ``met`` for a higher-is-better target."""
        self.met = bool(self.runs) and self.median >= goal
        return self

    def judge_at_most(self, goal: float) -> Figure:
        """Set ``met`` for a lower-is-better target."""
        self.met = bool(self.runs) and self.median <= goal
        return self


def number(value: float) -> str:
    """Readable figure: thousands separated, one decimal below 100, none above."""
    if value != value:  # NaN: no run produced a value
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:,.2f}"
