"""The disposition scores of the report: Wilson score intervals, the confusion matrix and the benign class."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from vigil.evaluation.scores import NOT_DECIDED, ConfusionMatrix, Rate, wilson_interval


@dataclass(frozen=True)
class _Result:
    expected_disposition: str
    decided_disposition: str


@pytest.mark.parametrize(
    ("hits", "total", "low", "high"),
    [(8, 10, 0.4902, 0.9433), (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (1, 2, 0.0945, 0.9055)],
)
def test_the_wilson_interval_matches_the_published_values(hits: int, total: int, low: float, high: float) -> None:
    assert wilson_interval(hits, total) == pytest.approx((low, high), abs=5e-5)


def test_no_scenario_gives_the_whole_range_and_a_dash() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert Rate(hits=0, total=0).text() == "–"
    assert Rate(hits=8, total=10).text() == "8/10 = 80 % (95 % CI 49–94 %)"


def test_the_matrix_counts_expected_by_decided_with_recall_per_class() -> None:
    results = [
        *[_Result("true_positive", "true_positive")] * 3,
        _Result("true_positive", NOT_DECIDED),
        _Result("benign_true_positive", "benign_true_positive"),
        _Result("benign_true_positive", "false_positive"),
        _Result("false_positive", "false_positive"),
        _Result("false_positive", "true_positive"),
    ]
    matrix = ConfusionMatrix.of(results)

    assert matrix.rows == ["true_positive", "benign_true_positive", "false_positive"]  # pending has none
    assert matrix.columns[-1] == NOT_DECIDED
    assert matrix.counts["true_positive"] == {
        "true_positive": 3, "benign_true_positive": 0, "false_positive": 0, "pending": 0, NOT_DECIDED: 1,
    }  # fmt: skip
    assert (matrix.recall("true_positive").hits, matrix.recall("true_positive").total) == (3, 4)
    assert (matrix.recall("benign_true_positive").hits, matrix.recall("benign_true_positive").total) == (1, 2)
    assert (matrix.accuracy().hits, matrix.accuracy().total) == (5, 8)
    # BTP and FP as one class: the BTP decided FP counts, the FP decided TP does not.
    assert (matrix.benign_recall().hits, matrix.benign_recall().total) == (3, 4)
    assert (matrix.benign_merged_accuracy().hits, matrix.benign_merged_accuracy().total) == (6, 8)
