"""Intake benchmarks: E1 against the bare baseline, batch intake, 200 connections on SQLite, idle memory.

Every run of every server gets a fresh copy of a store set up with Vigil's CLI, a fresh `vigil serve` (or
baseline) process, the same JSON body and the same wrk. Within one run the servers take turns (baseline, Vigil
untyped, Vigil typed), so a figure and the one it is compared with see the same moment of a shared machine.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace

from bench import load
from bench.report import Figure, measured
from bench.server import (
    ORGANIZATION,
    PROVIDER,
    VIGIL,
    Backend,
    Server,
    Store,
    Template,
    empty_store,
    running,
    vigil_templates,
)

BASELINE = [sys.executable, "-m", "bench.baseline", "--port", "{port}"]
SERVE = [VIGIL, "serve", "--port", "{port}"]
E1_PATH = "/serviceapi/alerts"
BATCH_PATH = "/serviceapi/alerts/batch"
BATCH_SIZE = 500
BATCH_SECTION = "Batch intake (POST /serviceapi/alerts/batch, 500 alerts per request)"
BASELINE_LABEL = "Baseline"
#: A realistic identity-provider alert (about 500 bytes), the same for the baseline and for Vigil.
ALERT: dict[str, str] = {
    "organization_code": ORGANIZATION,
    "alert_provider": PROVIDER,
    "alert_content": json.dumps(
        {
            "eventType": "user.session.start",
            "displayMessage": "User login to Okta",
            "outcome": {"result": "SUCCESS", "reason": None},
            "actor": {"alternateId": "jane.doe@acme.example", "displayName": "Jane Doe", "type": "User"},
            "client": {
                "ipAddress": "203.0.113.7",
                "userAgent": {"rawUserAgent": "Mozilla/5.0 (X11; Linux x86_64)", "os": "Linux", "browser": "FIREFOX"},
                "geographicalContext": {"city": "Lagos", "country": "Nigeria"},
            },
            "securityContext": {"asNumber": 64500, "asOrg": "Example Transit", "isProxy": True},
            "published": "2026-11-20T08:15:00.000Z",
        }
    ),
}
TYPED_ALERT = ALERT | {"alert_type": "Suspicious sign-in"}
DESCRIPTION = """\
E1 is `POST /serviceapi/alerts` with a {size}-byte identity-provider alert, Bearer API key, one `vigil serve` process
(uvicorn, in-process investigation worker). *Typed* alerts carry `alert_type`, so each one also starts an
investigation by the built-in analyst in the same process (no integration connections: skills are unavailable and
skipped), which is the point: intake while investigations run. The baseline is `bench/baseline.py`: the same
uvicorn and database, parse the JSON, one INSERT + commit into a table shaped like `alerts`, 201; no auth, no
validation, no numbering. Saturation: the best alerts/s over {levels} connections (chosen in the first run, kept
after). 50 % of saturation: a few connections pausing between requests (wrk `delay()`) so the offered rate is half
the run's saturation rate; the rate achieved is shown. "Non-2xx" counts every answer that was not 2xx (a 503 among
them misses the target); "lost" is the saturation run's 2xx answers minus the rows that appeared in `alerts` during
it (a positive number is a bug; requests still in flight when wrk stops are stored but not counted, so a loss
smaller than the connection count could hide behind them).
The per-key rate limit is raised (`VIGIL_RATE_LIMIT_PER_SECOND` / `_BURST` = 1,000,000) so the limiter never caps
the load: one wrk key sends what a whole fleet of senders would (the default, 2,000/s with a burst of 4,000, is
per key and above one process's E1 rate)."""


@dataclass(frozen=True)
class Plan:
    """How long and how hard: the full run's numbers or the smoke run's."""

    seconds: float
    warm_seconds: float
    calibrate_seconds: float
    probe_seconds: float
    idle_seconds: float
    levels: tuple[int, ...]
    batch_levels: tuple[int, ...]
    crowd: int


FULL = Plan(
    seconds=5,
    warm_seconds=1,
    calibrate_seconds=2,
    probe_seconds=1,
    idle_seconds=3,
    levels=(4, 16, 64),
    batch_levels=(2, 6),
    crowd=200,
)
#: One second per wrk run, one connection level, no warm-up: every code path once, in seconds.
SMOKE = replace(
    FULL, seconds=1, warm_seconds=0, probe_seconds=0, idle_seconds=0, levels=(8,), batch_levels=(2,), crowd=50
)


def target(server: Server, path: str, body: object, api_key: str) -> load.Target:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {api_key}"}
    return load.Target(server.base_url + path, json.dumps(body), headers)


def stored_during(store: Store, action: Callable[[], load.Result]) -> tuple[load.Result, int]:
    """Run `action` and count the alerts that appeared meanwhile (in-flight requests given time to commit)."""
    before = store.count()
    result = action()
    settled = -1
    after = store.count()
    while after != settled:
        settled = after
        time.sleep(0.3)
        after = store.count()
    return result, after - before


class Intake:
    """Collects each figure's runs; `figures()` judges them once all runs are in."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        self.connections: dict[tuple[str, str], int] = {}
        self.statuses: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        self.notes: dict[tuple[str, str], str] = {}

    def add(self, section: str, name: str, unit: str, value: float) -> None:
        self.values[(section, name, unit)].append(value)

    def best(self, section: str, name: str, aim: load.Target, levels: tuple[int, ...]) -> int:
        """The saturating connection count, found in the first run and kept (the note says which)."""
        if (section, name) not in self.connections:
            best = load.best_connections(aim, levels, self.plan.calibrate_seconds)
            self.connections[(section, name)] = best
            tried = f" (best of {'/'.join(map(str, levels))})" if len(levels) > 1 else ""
            self.notes[(section, name)] = f"{best} connections{tried}"
        return self.connections[(section, name)]

    def e1(self, section: str, label: str, server: Server, store: Store, api_key: str, body: object) -> float:
        """Saturation, then 50 % of it; returns the saturation rate."""
        aim = target(server, E1_PATH, body, api_key)
        if self.plan.warm_seconds:
            load.run(aim, 4, self.plan.warm_seconds)  # warm-up: connections, pools, first calls
        connections = self.best(section, f"{label}: alerts/s at saturation", aim, self.plan.levels)
        saturation, stored = stored_during(store, lambda: load.run(aim, connections, self.plan.seconds))
        half = load.at_rate(aim, saturation.rate / 2, self.plan.seconds, self.plan.probe_seconds)
        self.add(section, f"{label}: alerts/s at saturation", "alerts/s", saturation.rate)
        self.add(section, f"{label}: p50 at 50 % of saturation", "ms", half.p50_ms)
        self.add(section, f"{label}: p99 at 50 % of saturation", "ms", half.p99_ms)
        self.add(section, f"{label}: rate achieved at 50 %", "alerts/s", half.rate)
        if label != BASELINE_LABEL:
            self.failures(section, f"{label}: non-2xx responses", saturation, half)
            self.add(section, f"{label}: alerts lost (2xx − stored)", "", max(0, saturation.ok - stored))
        return saturation.rate

    def failures(self, section: str, name: str, *results: load.Result) -> None:
        """Non-2xx answers as the figure; which statuses and socket errors go to its note."""
        self.add(section, name, "", sum(result.non_2xx for result in results))
        for result in results:
            self.statuses[(section, name)].update(
                {str(status): n for status, n in result.codes.items() if not 200 <= status < 300}
            )
            if result.socket_errors:
                self.statuses[(section, name)]["socket errors"] += result.socket_errors

    def batch(self, backend: Backend, server: Server, store: Store, api_key: str) -> None:
        aim = target(server, BATCH_PATH, {"alerts": [ALERT] * BATCH_SIZE}, api_key)
        connections = self.best(BATCH_SECTION, f"{backend}: alerts/s", aim, self.plan.batch_levels)
        result, stored = stored_during(store, lambda: load.run(aim, connections, self.plan.seconds))
        self.add(BATCH_SECTION, f"{backend}: alerts/s", "alerts/s", result.rate * BATCH_SIZE)
        self.failures(BATCH_SECTION, f"{backend}: non-2xx responses", result)
        lost = max(0, result.ok * BATCH_SIZE - stored)
        self.add(BATCH_SECTION, f"{backend}: alerts lost (2xx × 500 − stored)", "", lost)

    def crowd(self, server: Server, api_key: str) -> None:
        """Many more connections than the pool has: SQLite must queue them, never answer 503."""
        result = load.run(target(server, E1_PATH, ALERT, api_key), self.plan.crowd, self.plan.seconds)
        section, label = f"E1 intake ({Backend.SQLITE})", f"{self.plan.crowd} connections"
        self.add(section, f"{label}: 503 responses", "", result.count(503))
        self.notes[(section, f"{label}: 503 responses")] = f"wrk, {self.plan.seconds:g} s (socket errors: next row)"
        self.add(section, f"{label}: alerts/s", "alerts/s", result.rate)
        self.failures(section, f"{label}: non-2xx responses", result)

    def vigil_untyped(self, backend: Backend, server: Server, store: Store, api_key: str) -> float:
        """Idle memory first, then E1, batch and (SQLite) the crowd on the same fresh server."""
        time.sleep(self.plan.idle_seconds)  # smoke: 0, start-up's own RSS
        self.add("Memory", f"`vigil serve` idle RSS ({backend})", "MB", server.rss_mb())
        rate = self.e1(f"E1 intake ({backend})", "Vigil untyped", server, store, api_key, ALERT)
        self.batch(backend, server, store, api_key)
        if backend is Backend.SQLITE:
            self.crowd(server, api_key)
        return rate

    def one_run(self, backend: Backend, template: Template) -> None:
        """Baseline, Vigil untyped, Vigil typed, each on a fresh store, one after the other."""
        section, key = f"E1 intake ({backend})", template.api_key
        baseline = measure_on(
            BASELINE, empty_store(backend), lambda s, st: self.e1(section, BASELINE_LABEL, s, st, "none", ALERT)
        )
        untyped = measure_on(SERVE, template.clone(), lambda s, st: self.vigil_untyped(backend, s, st, key))
        typed = measure_on(
            SERVE, template.clone(), lambda s, st: self.e1(section, "Vigil typed", s, st, key, TYPED_ALERT)
        )
        for label, rate in (("Vigil untyped", untyped), ("Vigil typed", typed)):
            self.add(section, f"{label}: share of the baseline", "%", 100 * rate / baseline if baseline else 0.0)

    def figures(self) -> list[Figure]:
        figures = []
        for (section, name, unit), runs in self.values.items():
            figure = judge(section, name, unit, runs)
            seen = self.statuses.get((section, name))
            statuses = "seen: " + ", ".join(f"{status} × {n}" for status, n in sorted(seen.items())) if seen else ""
            figure.note = "; ".join(part for part in (self.notes.get((section, name), ""), statuses) if part)
            figures.append(figure)
        labels = list(dict.fromkeys([*LABELS, *(figure.name.partition(": ")[0] for figure in figures)]))
        return sorted(figures, key=lambda figure: order(figure, labels))


def measure_on(command: list[str], store: Store, measure: Callable[[Server, Store], float]) -> float:
    """Start `command` on `store`, measure, then stop the server and drop the store whatever happens."""
    try:
        with running(command, store.env(), store.data_dir) as server:
            return measure(server, store)
    finally:
        store.drop()


#: Row order within a section: by who was measured, then by what.
LABELS = (BASELINE_LABEL, "Vigil untyped", "Vigil typed")
METRICS = ("alerts/s", "share of the baseline", "p50", "p99", "rate achieved", "non-2xx", "alerts lost")


def order(figure: Figure, labels: list[str]) -> tuple[int, int]:
    """Who was measured (baseline first, others as they first appeared), then what (throughput first)."""
    label, _, metric = figure.name.partition(": ")
    return labels.index(label), next((i for i, m in enumerate(METRICS) if metric.startswith(m)), len(METRICS))


def judge(section: str, name: str, unit: str, runs: list[float]) -> Figure:
    """The issue's targets, by figure."""
    postgres = "PostgreSQL" in section
    if name.endswith("alerts/s at saturation") and name.startswith("Vigil"):
        return measured(section, name, unit, runs, at_least=1000 if postgres else 500)
    if name.endswith("share of the baseline") and postgres:
        return measured(section, name, unit, runs, at_least=70)
    if name.endswith("p99 at 50 % of saturation") and name.startswith("Vigil"):
        return measured(section, name, unit, runs, at_most=50)
    if name.endswith(("503 responses", "non-2xx responses")) or ": alerts lost" in name:
        return measured(section, name, unit, runs, at_most=0)
    if section.startswith("Batch") and name.endswith(": alerts/s"):
        return measured(section, name, unit, runs, at_least=10_000)
    return Figure(section, name, unit, runs)


def run(smoke: bool, runs: int, backends: tuple[Backend, ...] = tuple(Backend)) -> list[Figure]:
    """All intake figures, `runs` runs each."""
    plan = SMOKE if smoke else FULL
    intake = Intake(plan)
    started = time.monotonic()
    with vigil_templates(*backends) as templates:
        for number in range(runs):
            for backend in backends:
                print(f"intake: run {number + 1}/{runs}, {backend} ({time.monotonic() - started:.0f} s)", flush=True)
                intake.one_run(backend, templates[backend])
    return intake.figures()


def description() -> dict[str, str]:
    """Text shown under each of this module's sections."""
    e1 = DESCRIPTION.format(size=len(json.dumps(ALERT)), levels="/".join(map(str, FULL.levels)))
    return {
        f"E1 intake ({Backend.POSTGRES})": e1,
        f"E1 intake ({Backend.SQLITE})": "Same method on SQLite (`VIGIL_DATA_DIR`, WAL). The 200-connection rows "
        "hold 200 open connections on the untyped server after its other runs: SQLite has one writer, so "
        "requests must queue and never be answered 503.",
        BATCH_SECTION: "500 copies of the E1 alert per "
        "request, on the untyped server right after its E1 runs; alerts/s = 2xx answers × 500 / s.",
        "Memory": "VmRSS of the `vigil serve` process and its children after start-up and "
        f"{FULL.idle_seconds:g} s idle (no request yet).",
    }
