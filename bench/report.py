"""What every benchmark returns: figures with their runs and target, so one writer can put them side by side.

A figure is the median of its runs with min-max beside it; ``target`` is the goal as text and ``met`` says
whether the median reaches it (None: the row has no target and is context, e.g. the bare baseline).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


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


def measured(
    section: str,
    name: str,
    unit: str,
    runs: list[float],
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    note: str = "",
) -> Figure:
    """A figure judged against its goal, with the target text written from the same number."""
    figure = Figure(section, name, unit, list(runs), note=note)
    if at_least is not None:
        figure.target = f"≥ {at_least:,g} {unit}".strip()
        figure.judge_at_least(at_least)
    elif at_most is not None:
        figure.target = f"≤ {at_most:,g} {unit}".strip() if at_most else "0"
        figure.judge_at_most(at_most)
    return figure


BEGIN = "<!-- bench:begin: written by `python -m bench`; it rewrites everything up to the end marker -->"
END = "<!-- bench:end -->"
#: The generated part, whatever words its opening marker carries.
GENERATED = re.compile(r"<!-- bench:begin\b.*?-->.*?<!-- bench:end -->", re.DOTALL)


def count(value: float) -> str:
    """A whole number (responses, alerts) without decimals; a median of two may still fall between."""
    return f"{value:,.0f}" if float(value).is_integer() else number(value)


def note_text(figure: Figure, notes: Mapping[str, str]) -> str:
    """The lead's explanation from bench/notes.py first, then how the figure was taken."""
    why = notes.get(f"{figure.section} / {figure.name}", "")
    if figure.met is False and not why:
        why = "missed: explanation pending (bench/notes.py)"
    return "; ".join(part for part in (why, figure.note) if part).replace("|", "\\|")


def table(figures: list[Figure], notes: Mapping[str, str]) -> list[str]:
    lines = ["| figure | median | min–max | runs | target | met | note |", "|---|---:|---:|---:|---|---|---|"]
    for figure in figures:
        met = {True: "yes", False: "**no**", None: ""}[figure.met]
        shown = count if figure.runs and all(float(run).is_integer() for run in figure.runs) else number
        spread = f"{shown(figure.low)}–{shown(figure.high)}" if figure.runs else "—"
        median = f"{shown(figure.median)} {figure.unit}".strip()
        lines.append(
            f"| {figure.name} | {median} | {spread} | {len(figure.runs)} "
            f"| {figure.target} | {met} | {note_text(figure, notes)} |"
        )
    return lines


def generated(
    figures: list[Figure],
    machine_info: Mapping[str, str],
    commands: list[str],
    descriptions: Mapping[str, str],
    notes: Mapping[str, str],
    header: str,
) -> str:
    """The generated part of docs/benchmarks.md: how to run, the machine, one table per section."""
    lines = [BEGIN, "", header.strip(), "", "### Commands", "", "```", *commands, "```", "", "### Machine", ""]
    lines += ["| | |", "|---|---|", *(f"| {key} | {value} |" for key, value in machine_info.items()), ""]
    sections = list(dict.fromkeys(figure.section for figure in figures))
    for section in sections:
        lines += [f"### {section}", ""]
        if descriptions.get(section):
            lines += [descriptions[section].strip(), ""]
        lines += [*table([f for f in figures if f.section == section], notes), ""]
    return "\n".join([*lines, END])


def write_markdown(path: Path, text: str) -> None:
    """Replace the generated part of `path`, keeping every hand-written line outside the markers.

    Without markers yet, the generated part goes right under the first heading and the rest follows verbatim.
    """
    old = path.read_text() if path.exists() else "# Benchmarks\n"
    if GENERATED.search(old):
        path.write_text(GENERATED.sub(lambda _: text, old, count=1))
        return
    title, _, rest = old.partition("\n")
    path.write_text(f"{title}\n\n{text}\n\n{rest.lstrip()}")
