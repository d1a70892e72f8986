"""The held-out batches (each a ``--holdout`` folder, reported apart from the labelled set and from each other) and
the knowledge ablation: the held-out scenarios run again once with each knowledge bundle switched off.

Only totals, rates and the confusion matrix of held-out runs are shown unless details are asked for: a reason per
scenario says what the analyst got wrong, and tuning on that would make the held-out figures as optimistic as the
labelled set's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from vigil.evaluation.runner import EvalReport, run_evaluation
from vigil.evaluation.scenario import Scenario
from vigil.evaluation.scores import Rate
from vigil.knowledge.bundle import bundles, disabled_bundles, set_disabled


def batch_name(index: int) -> str:
    """The name of the ``index``-th (0-based) ``--holdout`` folder, in the order given: ``batch 1``, ``batch 2``…"""
    return f"batch {index + 1}"


class HeldOutBatch(BaseModel):
    name: str = Field(description="`batch 1`, `batch 2`, … in the order the folders were given.")
    folder: str = Field(description="The folder as given on the command line.")
    report: EvalReport


class AblationPass(BaseModel):
    """The held-out scenarios (every batch together) with these bundles switched off (none: all on)."""

    disabled: list[str]
    report: EvalReport

    @property
    def label(self) -> str:
        return "all on" if not self.disabled else f"{', '.join(self.disabled)} off"

    @property
    def disposition(self) -> Rate:
        return self.report.confusion.accuracy()


class Ablation(BaseModel):
    passes: list[AblationPass] = Field(description="All on first, then one bundle off at a time.")

    @property
    def baseline(self) -> AblationPass:
        return next(run for run in self.passes if not run.disabled)

    def difference(self, run: AblationPass) -> tuple[float, int]:
        """(percentage points, scenarios) decided correctly compared with all bundles on."""
        base, this = self.baseline.disposition, run.disposition
        return this.pct - base.pct, this.hits - base.hits


class HeldOut(BaseModel):
    batches: list[HeldOutBatch]
    ablation: Ablation | None = None
    details: bool = Field(default=False, description="Show each held-out scenario's result and reasons.")

    @property
    def combined(self) -> EvalReport:
        first, *rest = (batch.report for batch in self.batches)
        return first.combined_with(*rest)


def run_ablation(
    scenarios: Sequence[Scenario],
    *,
    database_url: str | None = None,
    model: str = "builtin",
    scenario_timeout: float | None = None,
    settings_overrides: Mapping[str, Any] | None = None,
    progress: Callable[[AblationPass], None] | None = None,
) -> Ablation:
    """Run ``scenarios`` with every bundle on, then once with each bundle off (``knowledge_disabled``, which the
    engine applies); the process's switch is put back as it was afterwards."""
    before = disabled_bundles()
    passes: list[AblationPass] = []
    try:
        for disabled in ([], *([bundle.name] for bundle in bundles())):
            overrides = {**dict(settings_overrides or {}), "knowledge_disabled": disabled}
            report = run_evaluation(
                scenarios,
                database_url=database_url,
                settings_overrides=overrides,
                model=model,
                scenario_timeout=scenario_timeout,
            )
            passes.append(AblationPass(disabled=disabled, report=report))
            if progress is not None:
                progress(passes[-1])
    finally:
        set_disabled(before)
    return Ablation(passes=passes)


def shown_folder(folder: Path) -> str:
    """A folder relative to the working directory when it is under it (as a report should name it)."""
    try:
        return str(folder.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(folder)
