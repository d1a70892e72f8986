"""Stacked bar charts as geometry for an inline SVG template: no chart library, no script, no style attribute
(each segment's colour is a class in vigil.css)."""

from __future__ import annotations

from dataclasses import dataclass

from vigil.dashboard.schemas import Series

WIDTH = 640
HEIGHT = 220
LEFT = 36  # room for the y-axis numbers
BOTTOM = 22  # room for the day labels
TOP = 8


@dataclass(frozen=True)
class Segment:
    key: str
    y: float
    height: float


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    title: str
    tick: str  # the day label under the bar, or "" where labels would crowd
    segments: list[Segment]


@dataclass(frozen=True)
class Gridline:
    y: float
    value: int


@dataclass(frozen=True)
class StackedChart:
    width: int
    height: int
    left: int
    baseline: float
    bars: list[Bar]
    gridlines: list[Gridline]


def stacked_bars(series: Series, noun: str, labels: dict[str, str]) -> StackedChart:
    """One bar per day, segments bottom-up in the series' key order, scaled to the busiest day."""
    plot_height = HEIGHT - TOP - BOTTOM
    baseline = float(HEIGHT - BOTTOM)
    top_value = _nice_ceiling(max((day.total for day in series.days), default=0))
    slot = (WIDTH - LEFT) / max(len(series.days), 1)
    every = max(1, round(len(series.days) / 10))  # at most ~10 labels, so they never overlap
    bars = []
    for index, day in enumerate(series.days):
        y = baseline
        segments = []
        for key, count in zip(series.keys, day.counts, strict=True):
            if count:
                height = count / top_value * plot_height
                y -= height
                segments.append(Segment(key=key, y=round(y, 2), height=round(height, 2)))
        parts = ", ".join(f"{labels[k]} {c}" for k, c in zip(series.keys, day.counts, strict=True) if c)
        bars.append(
            Bar(
                x=round(LEFT + index * slot + slot * 0.15, 2),
                width=round(slot * 0.7, 2),
                title=f"{day.day.isoformat()}: {day.total} {noun}" + (f" ({parts})" if parts else ""),
                tick=day.day.strftime("%m-%d") if (len(series.days) - 1 - index) % every == 0 else "",
                segments=segments,
            )
        )
    gridlines = [
        Gridline(y=round(baseline - share * plot_height, 2), value=round(top_value * share)) for share in (0.5, 1.0)
    ]
    return StackedChart(width=WIDTH, height=HEIGHT, left=LEFT, baseline=baseline, bars=bars, gridlines=gridlines)


def _nice_ceiling(value: int) -> int:
    """The smallest of 2, 4, 10, 20, 40, 100, … at least `value`, so both gridlines are whole numbers."""
    ceiling = 2
    while ceiling < value:
        ceiling = ceiling * 5 // 2 if str(ceiling).startswith("4") else ceiling * 2
    return ceiling
