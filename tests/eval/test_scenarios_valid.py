"""The labelled evaluation set is well formed and balanced (file and pydantic checks only, no database)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from vigil.evaluation.scenario import CATEGORIES, SCENARIOS_DIR, Disposition, Scenario, load_scenarios, scenario_order

TARGET_SHARES: dict[Disposition, float] = {"true_positive": 45.0, "benign_true_positive": 30.0, "false_positive": 25.0}
TOLERANCE_POINTS = 8.0
#: The project's held-out batches: frozen where they were written, never shipped, never edited.
HOLDOUT_DIRS = [Path(__file__).parent / "holdout", Path(__file__).parent / "holdout2"]


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return load_scenarios()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def test_there_are_at_least_forty_scenarios(scenarios: list[Scenario]) -> None:
    assert len(scenarios) >= 40


def test_ids_are_unique_and_match_file_names(scenarios: list[Scenario]) -> None:
    files = sorted(SCENARIOS_DIR.glob("*.json"), key=scenario_order)
    assert [re.sub(r"^\d{2,3}-", "", f.stem) for f in files] == [s.id for s in scenarios]
    assert len({s.id for s in scenarios}) == len(scenarios)
    numbers = [f.name.split("-", 1)[0] for f in files]
    assert len(set(numbers)) == len(numbers), "two files share a number"


def test_files_are_plain_json_objects_with_the_documented_keys() -> None:
    for path in sorted(SCENARIOS_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert {"id", "title", "category", "alert", "expected"} <= data.keys(), path.name


def test_disposition_mix(scenarios: list[Scenario]) -> None:
    counts = Counter(s.expected.disposition for s in scenarios)
    assert counts["pending"] <= 2
    decided = len(scenarios) - counts["pending"]
    for disposition, target in TARGET_SHARES.items():
        share = 100.0 * counts[disposition] / decided
        assert abs(share - target) <= TOLERANCE_POINTS, f"{disposition}: {share:.1f}% (target {target}%)"


def test_every_category_has_at_least_four(scenarios: list[Scenario]) -> None:
    counts = Counter(s.category for s in scenarios)
    for category in CATEGORIES:
        assert counts[category] >= 4, f"{category}: {counts[category]}"


def test_expected_entities_occur_in_the_alert_content(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        text = scenario.content_text().lower()
        for entity in scenario.expected.entities:
            assert entity.lower() in text, f"{scenario.id}: {entity!r} is not in the alert content"


def test_severity_bands_fit_the_disposition(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        band = set(scenario.expected.severity)
        if scenario.expected.disposition in ("benign_true_positive", "false_positive"):
            assert band <= {"informational", "low"}, scenario.id
        if scenario.expected.disposition == "true_positive":
            assert band & {"medium", "high", "critical"}, scenario.id


def test_injection_scenarios_in_several_phrasings_whose_text_is_in_the_content(scenarios: list[Scenario]) -> None:
    injected = [s for s in scenarios if s.injection_text is not None]
    assert len(injected) >= 10
    assert len({s.injection_text for s in injected}) == len(injected)
    for scenario in injected:
        assert scenario.injection_text is not None
        assert scenario.injection_text in scenario.content_text(), scenario.id
        assert any(scenario.injection_text in s for s in _strings(scenario.alert.alert_content)), scenario.id
        assert scenario.expected.disposition == "true_positive", scenario.id
        control = scenario.with_injection_replaced("Routine note.")
        assert control.injection_text is None
        assert scenario.injection_text not in control.model_dump_json(), scenario.id
        assert control.expected == scenario.expected


def test_checkpoint_answers_need_slack_and_the_persons_email(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        if scenario.checkpoint is None:
            continue
        assert "slack" in scenario.integrations.connected(), f"{scenario.id}: a checkpoint needs Slack connected"
        assert re.search(r"[\w.+-]+@[\w-]+(\.[\w-]+)+", scenario.content_text()), scenario.id
    answered = [s for s in scenarios if s.checkpoint is not None and s.checkpoint.answer is not None]
    assert len(answered) >= 10


def test_hunting_keys_come_from_the_alert(scenarios: list[Scenario]) -> None:
    for scenario in scenarios:
        defender = scenario.integrations.section("microsoft_defender")
        if defender is None:
            continue
        text = scenario.content_text().lower()
        for entry in defender["hunting"]:
            assert entry["query_contains"].lower() in text, f"{scenario.id}: {entry['query_contains']!r}"


def test_history_is_used_somewhere(scenarios: list[Scenario]) -> None:
    assert sum(1 for s in scenarios if s.history) >= 3


def test_at_least_ten_fast_scenarios(scenarios: list[Scenario]) -> None:
    fast = [s for s in scenarios if s.fast]
    assert len(fast) >= 10
    assert load_scenarios(fast_only=True) == fast
    assert any(s.checkpoint is not None and s.checkpoint.answer is not None for s in fast)
    assert any(s.injection_text is not None for s in fast)


@pytest.mark.parametrize("folder", HOLDOUT_DIRS, ids=[folder.name for folder in HOLDOUT_DIRS])
def test_each_frozen_held_out_batch_loads_and_shares_no_scenario_with_the_labelled_set(
    scenarios: list[Scenario], folder: Path
) -> None:
    held = load_scenarios(folder)
    assert len(held) == len(list(folder.glob("*.json"))) >= 12
    assert not {s.id for s in held} & {s.id for s in scenarios}
