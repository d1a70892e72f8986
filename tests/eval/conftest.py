"""The evaluation set in the test suite: the fast scenarios, loaded once."""

from __future__ import annotations

import pytest

from vigil.evaluation.scenario import Scenario, load_scenarios


@pytest.fixture(scope="session")
def fast_scenarios() -> list[Scenario]:
    scenarios = load_scenarios(fast_only=True)
    if not scenarios:
        pytest.fail("src/vigil/evaluation/scenarios has no scenario marked fast")
    return scenarios
