"""Every labelled scenario, end to end on SQLite, and half of them on PostgreSQL, gets its expected disposition.

`vigil eval` runs the set one scenario after another; here it is cut into chunks (every CHUNKS-th scenario, so the
slow ones spread out), one test per chunk and database, which pytest-xdist hands to its workers. SQLite runs every
chunk; PostgreSQL every other one (half the set, spread over every category's numbers), which keeps `make test`
within its 20 minutes on the 2-core CI machine (the whole set takes about 1 min 50 s on SQLite and 2 min 15 s on
PostgreSQL there, over 2 workers). A failure names each scenario that missed: its id, the expected and the decided
disposition, and why it failed.

The analyst does not yet reach every expected disposition: the scenarios it still misses are listed, each by id, in
`labelled_known_misses.txt`, a ratchet that only shrinks. A miss not on the list fails (a regression), and so does a
listed scenario that now passes (take it off the list), so the list always says exactly what is still wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import BACKENDS

from vigil.evaluation.runner import ScenarioResult, run_evaluation
from vigil.evaluation.scenario import Scenario, load_scenarios

KNOWN_MISSES_FILE = Path(__file__).with_name("labelled_known_misses.txt")

#: Chunks per database: a multiple of the two xdist workers, small enough that no chunk runs much longer than the
#: others (the set takes about two minutes per database run serially on the 2-core CI machine).
CHUNKS = 8
#: The chunks each database runs: SQLite all, PostgreSQL every other one.
CHUNKS_ON = {"sqlite": range(CHUNKS), "postgresql": range(0, CHUNKS, 2)}
CASES = [(backend, chunk) for backend in BACKENDS for chunk in CHUNKS_ON[backend]]


def known_misses() -> frozenset[str]:
    """The ids of the labelled scenarios whose disposition the analyst still misses (``#`` starts a comment)."""
    lines = (line.split("#", 1)[0].strip() for line in KNOWN_MISSES_FILE.read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line)


def test_every_known_miss_is_a_labelled_scenario() -> None:
    assert known_misses() <= {scenario.id for scenario in load_scenarios()}


def _chunk(index: int) -> list[Scenario]:
    return load_scenarios()[index::CHUNKS]


def _missed(result: ScenarioResult) -> str:
    reason = "; ".join(result.failures) or "no other failure"
    return f"{result.id}: expected {result.expected_disposition}, decided {result.decided_disposition} ({reason})"


@pytest.mark.parametrize(
    ("backend", "chunk"), CASES, ids=[f"{backend}-chunk{chunk + 1}of{CHUNKS}" for backend, chunk in CASES]
)
def test_every_labelled_scenario_gets_its_expected_disposition(db_url: str, backend: str, chunk: int) -> None:
    scenarios = _chunk(chunk)
    assert scenarios, f"chunk {chunk + 1} of {CHUNKS} is empty: the set has fewer than {CHUNKS} scenarios"

    report = run_evaluation(scenarios, database_url=db_url)

    assert [result.id for result in report.results] == [scenario.id for scenario in scenarios]
    known = known_misses()
    missed = [_missed(result) for result in report.results if not result.disposition_ok and result.id not in known]
    fixed = [result.id for result in report.results if result.disposition_ok and result.id in known]
    problems = [*missed, *(f"{scenario_id}: now passes, take it off {KNOWN_MISSES_FILE.name}" for scenario_id in fixed)]
    if problems:
        heading = (
            f"{backend}, chunk {chunk + 1} of {CHUNKS}: {len(missed)} new wrong disposition(s), {len(fixed)} fixed"
        )
        pytest.fail("\n".join([heading, *problems]), pytrace=False)
