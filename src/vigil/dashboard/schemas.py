"""What the dashboard shows, as the service computes it (seconds and counts; the page formats them)."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel

#: Selectable windows in days; the default is the first.
WINDOW_DAYS = (14, 30)
#: The severity/verdict bucket of an alert whose investigation has not produced a case (yet).
NOT_INVESTIGATED = "not_investigated"


class DayStack(BaseModel):
    """One day's count per key (severity or verdict), in the series' key order."""

    day: date
    counts: list[int]

    @property
    def total(self) -> int:
        return sum(self.counts)


class Series(BaseModel):
    """Per-day counts split by one attribute; every day of the window is present, empty days included."""

    keys: list[str]
    days: list[DayStack]

    @property
    def total(self) -> int:
        return sum(day.total for day in self.days)

    def key_totals(self) -> list[int]:
        return [sum(day.counts[index] for day in self.days) for index in range(len(self.keys))]


class MeanTime(BaseModel):
    """A mean duration over `count` alerts (None when there are none) out of `of` that could have one."""

    count: int
    of: int
    mean_seconds: float | None


class Percentiles(BaseModel):
    """Nearest-rank p50 and p95 of `count` durations (None when there are none)."""

    count: int
    p50_seconds: int | None
    p95_seconds: int | None


class Automation(BaseModel):
    """Closed cases, and how many of them no person closed (closed by Vigil or an API client)."""

    closed: int
    automated: int

    @property
    def rate(self) -> float | None:
        return self.automated / self.closed if self.closed else None


class Ranked(BaseModel):
    """A top-list row: a value (an alert type, or an entity with its kind) and in how many alerts it occurs."""

    label: str
    kind: str = ""
    count: int


class Dashboard(BaseModel):
    days: int
    organization_code: str | None
    alerts_by_severity: Series
    cases_by_verdict: Series
    mtta: MeanTime
    mttr: MeanTime
    investigation: Percentiles
    automation: Automation
    top_alert_types: list[Ranked]
    top_entities: list[Ranked]
    #: How many investigated alerts (newest in the window) the entity ranking was read from.
    entity_sample: int
