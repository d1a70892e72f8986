"""`vigil eval --set DIR`: a directory of one's own scenario files runs like the shipped set (its holdout/ apart),
and a missing directory or an invalid file stops the command before anything runs (exit 2)."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from vigil.cli import app
from vigil.evaluation.scenario import SCENARIOS_DIR
from vigil.knowledge.bundle import bundles, disabled_bundles

runner = CliRunner()
#: A fast scenario whose person confirms a chat checkpoint (so the chat fake answers), and one without.
ANSWERED = "edge-cloudflare-security-level-restored-confirmed"
PLAIN = "phishing-reported-knowbe4-simulation"


@pytest.fixture(autouse=True)
def _loggers_kept() -> Iterator[None]:
    """`vigil eval` points the root logger (and DBOS its own) at the CliRunner's stderr, closed once it returns."""
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in list(logging.root.manager.loggerDict))]
    kept = [(logger, list(logger.handlers), logger.level) for logger in loggers]
    yield
    for logger, handlers, level in kept:
        logger.handlers, logger.level = handlers, level
    for name in list(logging.root.manager.loggerDict):  # loggers the command created
        logger = logging.getLogger(name)
        if all(logger is not known for known in loggers):
            logger.handlers = []


def _output(result: Result) -> str:
    """What the command printed, with Rich's line wrapping undone."""
    return " ".join(result.output.split())


def _shipped(scenario_id: str) -> Path:
    return next(SCENARIOS_DIR.glob(f"[0-9][0-9]-{scenario_id}.json"))


def _scenario_rows(report: str) -> list[str]:
    """The scenario tables' rows (each names expected → got), by their first cell."""
    rows = [line for line in report.splitlines() if "→" in line and not line.startswith("| Scenario |")]
    return [row.split(" | ")[0].removeprefix("| ") for row in rows]


def test_a_directory_of_own_scenarios_runs_with_its_holdout_apart(db_url: str, tmp_path: Path) -> None:
    own = tmp_path / "my-scenarios"
    (own / "holdout").mkdir(parents=True)
    shutil.copy(_shipped(ANSWERED), own / f"01-{ANSWERED}.json")
    shutil.copy(_shipped(PLAIN), own / "holdout" / f"01-{PLAIN}.json")
    output = tmp_path / "reports" / "new-folder" / "evaluation.md"

    result = runner.invoke(
        app, ["eval", "--set", str(own), "--database-url", db_url, "--output", str(output)], catch_exceptions=False
    )

    assert result.exit_code == 0, result.output
    assert "Running 1 scenario(s)" in _output(result) and "Running 1 held-out scenario(s)" in _output(result)
    report = output.read_text(encoding="utf-8")
    assert f"vigil eval --set {own}" in report
    assert _scenario_rows(report) == [ANSWERED]
    labelled_row = next(line for line in report.splitlines() if line.startswith(f"| {ANSWERED} |"))
    assert labelled_row.endswith("| pass |"), labelled_row
    assert "## Held-out scenarios (never used for tuning)" in report
    assert "| batch 1 | `" in report and "| **combined** |" in report
    assert PLAIN not in report and PLAIN not in result.output  # no held-out scenario by name without details


def test_held_out_batches_are_totalled_apart_and_together_and_named_only_with_details(
    db_url: str, tmp_path: Path
) -> None:
    first, second = tmp_path / "batch-a", tmp_path / "batch-b"
    first.mkdir()
    second.mkdir()
    shutil.copy(_shipped(PLAIN), first / f"01-{PLAIN}.json")
    shutil.copy(_shipped(ANSWERED), second / f"01-{ANSWERED}.json")
    own = tmp_path / "set"
    own.mkdir()
    shutil.copy(_shipped(PLAIN), own / f"01-{PLAIN}.json")
    base = ["eval", "--set", str(own), "--holdout", str(first), "--holdout", str(second), "--database-url", db_url]

    quiet = runner.invoke(app, [*base, "--output", "-"], catch_exceptions=False)
    detailed = runner.invoke(app, [*base, "--holdout-details", "--output", "-"], catch_exceptions=False)

    assert quiet.exit_code == 0, quiet.output
    assert detailed.exit_code == 0, detailed.output
    batch_rows = [line for line in quiet.output.splitlines() if line.startswith(("| batch ", "| **combined**"))]
    assert [row.split(" | ")[0] for row in batch_rows] == ["| batch 1", "| batch 2", "| **combined**"]
    assert [row.split(" | ")[2] for row in batch_rows] == ["1", "1", "2"]
    assert "### Held-out dispositions" in quiet.output and "--holdout-details" in quiet.output
    assert ANSWERED not in quiet.output  # a held-out scenario is never named without details
    assert _scenario_rows(quiet.output) == [PLAIN]
    assert _scenario_rows(detailed.output) == [PLAIN, PLAIN, ANSWERED]
    assert "### Held-out batch 2 (`" in detailed.output
    assert f"--holdout {first} --holdout {second} --holdout-details" in detailed.output


def test_ablation_runs_the_held_out_scenarios_once_per_bundle_switched_off(db_url: str, tmp_path: Path) -> None:
    held = tmp_path / "held"
    held.mkdir()
    shutil.copy(_shipped(PLAIN), held / f"01-{PLAIN}.json")
    command = ["eval", "--scenario", PLAIN, "--database-url", db_url, "--output", "-"]

    refused = runner.invoke(app, [*command, "--ablation"])
    result = runner.invoke(
        app,
        ["eval", "--set", str(held), "--holdout", str(held), "--ablation", "--database-url", db_url, "--output", "-"],
        catch_exceptions=False,
    )

    assert refused.exit_code == 2 and "--ablation runs the held-out scenarios" in _output(refused)
    assert result.exit_code == 0, result.output
    table = result.output.split("## Knowledge ablation", 1)[1]
    rows = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows == ["| Knowledge", "| all on", *(f"| {bundle.name} off" for bundle in bundles())]
    assert disabled_bundles() == frozenset()  # the switch is back as it was


def test_a_missing_set_directory_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["eval", "--set", str(tmp_path / "nowhere"), "--output", "-"])
    assert result.exit_code == 2
    assert "no such directory" in _output(result)


def test_an_empty_set_directory_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["eval", "--set", str(tmp_path), "--output", "-"])
    assert result.exit_code == 2
    assert "no scenarios to run" in _output(result)


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        (lambda data: data["integrations"].update(acme_edr={}), "no loopback fake for integration 'acme_edr'"),
        (lambda data: data["integrations"]["cloudflare"].update(zones=[]), "zones"),
        (lambda data: data.update(category="weather"), "category"),
    ],
    ids=["unknown integration", "unknown section field", "unknown category"],
)
def test_an_invalid_scenario_file_exits_2_naming_it(tmp_path: Path, change: object, complaint: str) -> None:
    data = json.loads(_shipped(ANSWERED).read_text(encoding="utf-8"))
    assert callable(change)
    change(data)
    (tmp_path / f"01-{ANSWERED}.json").write_text(json.dumps(data), encoding="utf-8")

    result = runner.invoke(app, ["eval", "--set", str(tmp_path), "--output", "-"])

    assert result.exit_code == 2
    assert f"01-{ANSWERED}.json" in _output(result) and complaint in _output(result), result.output


def test_an_invalid_holdout_file_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    shutil.copy(_shipped(ANSWERED), tmp_path / f"01-{ANSWERED}.json")
    (tmp_path / "holdout").mkdir()
    (tmp_path / "holdout" / "not-numbered.json").write_text("{}", encoding="utf-8")

    result = runner.invoke(app, ["eval", "--set", str(tmp_path), "--output", "-"])

    assert result.exit_code == 2
    assert "not-numbered.json" in _output(result)


def test_a_held_out_folder_given_by_path_is_read_before_the_run_starts(tmp_path: Path) -> None:
    held = tmp_path / "held"
    held.mkdir()
    (held / "not-numbered.json").write_text("{}", encoding="utf-8")

    invalid = runner.invoke(app, ["eval", "--holdout", str(held), "--output", "-"])
    missing = runner.invoke(app, ["eval", "--holdout", str(tmp_path / "nowhere"), "--output", "-"])

    assert invalid.exit_code == 2 and "not-numbered.json" in _output(invalid)
    assert missing.exit_code == 2 and "--holdout" in _output(missing) and "no such directory" in _output(missing)
