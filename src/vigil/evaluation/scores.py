"""Disposition scores beyond the percentage: the confusion matrix, per-class recall with a 95 % Wilson score
interval, and accuracy with the two benign classes taken as one.

A held-out batch holds a few dozen scenarios, so a rate alone overstates what it shows; the Wilson interval (which
stays inside 0 to 100 % and is sound for small counts, unlike the normal approximation) says how far it may be off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, Field, computed_field

from vigil.evaluation.scenario import DISPOSITIONS

#: z for a two-sided 95 % interval.
Z_95 = 1.959964
#: The decided column of a scenario whose investigation did not complete (timeout, failure, error).
NOT_DECIDED = "not completed"
#: The two dispositions that both say "no attack": scored together, they measure whether the analyst told an
#: attack from a non-attack, whatever it thought the activity's cause was.
BENIGN: frozenset[str] = frozenset({"benign_true_positive", "false_positive"})


def wilson_interval(hits: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of ``hits`` of ``total`` as fractions (0.0 to 1.0); (0, 1) when ``total`` is 0."""
    if total <= 0:
        return 0.0, 1.0
    share = hits / total
    denominator = 1 + z * z / total
    centre = (share + z * z / (2 * total)) / denominator
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


class Rate(BaseModel):
    """``hits`` of ``total``, with its 95 % Wilson score interval in percent."""

    hits: int
    total: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def pct(self) -> float:
        return 100.0 * self.hits / self.total if self.total else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def low_pct(self) -> float:
        return 100.0 * wilson_interval(self.hits, self.total)[0]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def high_pct(self) -> float:
        return 100.0 * wilson_interval(self.hits, self.total)[1]

    def text(self) -> str:
        """``12/14 = 86 % (95 % CI 60-96 %)`` with an en dash; a dash alone for no scenario."""
        if not self.total:
            return "–"
        return f"{self.hits}/{self.total} = {self.pct:.0f} % (95 % CI {self.low_pct:.0f}–{self.high_pct:.0f} %)"


class Scored(Protocol):
    """What the matrix reads of a scenario's result (``ScenarioResult`` has it)."""

    @property
    def expected_disposition(self) -> str: ...

    @property
    def decided_disposition(self) -> str: ...


class ConfusionMatrix(BaseModel):
    """Expected by decided disposition counts over a set of scenarios."""

    counts: dict[str, dict[str, int]] = Field(
        description="expected -> decided -> scenarios; every disposition a row and a column, plus 'not completed'."
    )

    @classmethod
    def of(cls, results: Sequence[Scored]) -> ConfusionMatrix:
        columns = [*DISPOSITIONS, NOT_DECIDED]
        counts: dict[str, dict[str, int]] = {expected: dict.fromkeys(columns, 0) for expected in DISPOSITIONS}
        for result in results:
            row = counts.setdefault(result.expected_disposition, dict.fromkeys(columns, 0))
            decided = result.decided_disposition
            row[decided] = row.get(decided, 0) + 1
        return cls(counts=counts)

    @property
    def columns(self) -> list[str]:
        """The decided columns: every disposition, then 'not completed' (and anything else decided, at the end)."""
        extra = sorted({d for row in self.counts.values() for d in row} - {*DISPOSITIONS, NOT_DECIDED})
        return [*DISPOSITIONS, *extra, NOT_DECIDED]

    @property
    def rows(self) -> list[str]:
        """The expected dispositions that occur, in the format's order."""
        return [expected for expected, row in self.counts.items() if sum(row.values())]

    def recall(self, expected: str) -> Rate:
        """Of the scenarios expected ``expected``, how many were decided so."""
        row = self.counts.get(expected, {})
        return Rate(hits=row.get(expected, 0), total=sum(row.values()))

    def accuracy(self) -> Rate:
        """Scenarios decided as expected, of all."""
        return Rate(
            hits=sum(row.get(expected, 0) for expected, row in self.counts.items()),
            total=sum(sum(row.values()) for row in self.counts.values()),
        )

    def benign_recall(self) -> Rate:
        """Of the scenarios expected benign (BTP or FP), how many were decided benign (either of the two)."""
        rows = [row for expected, row in self.counts.items() if expected in BENIGN]
        return Rate(
            hits=sum(row.get(decided, 0) for row in rows for decided in BENIGN),
            total=sum(sum(row.values()) for row in rows),
        )

    def benign_merged_accuracy(self) -> Rate:
        """Accuracy with BTP and FP as one class: a benign scenario decided either benign class counts correct."""
        hits = 0
        for expected, row in self.counts.items():
            if expected in BENIGN:
                hits += sum(row.get(decided, 0) for decided in BENIGN)
            else:
                hits += row.get(expected, 0)
        return Rate(hits=hits, total=sum(sum(row.values()) for row in self.counts.values()))


def decided(status: str, disposition: str | None) -> str:
    """A run's decided column: its disposition when it completed, else 'not completed'."""
    if status != "completed" or disposition is None:
        return NOT_DECIDED
    return disposition
