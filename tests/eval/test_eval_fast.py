"""The fast subset of the labelled set, end to end on SQLite and PostgreSQL, must meet the acceptance thresholds.

`vigil eval` runs the whole set and writes docs/evaluation.md; this is its CI slice. A failure lists every
scenario that missed and why (expected vs got), then the full report.
"""

from __future__ import annotations

from vigil.evaluation.report import render_markdown
from vigil.evaluation.runner import Thresholds, run_evaluation
from vigil.evaluation.scenario import Scenario


def test_fast_scenarios_meet_the_thresholds(db_url: str, backend: str, fast_scenarios: list[Scenario]) -> None:
    report = run_evaluation(fast_scenarios, database_url=db_url)
    print(render_markdown(report, f"pytest tests/eval/test_eval_fast.py ({backend})"))

    shortfalls = report.shortfalls(Thresholds())
    assert not shortfalls, "\n".join(
        [f"{backend}: {'; '.join(shortfalls)}", "Scenarios that missed:", *report.failure_lines()]
    )
    assert len(report.results) == len(fast_scenarios)
