"""Growth: E1 latency and the console's Alerts page as the alerts table grows from 0 to 100k to 1M rows.

Two PostgreSQL stores, each with its own `vigil serve`: one grows (alerts bulk-loaded between sizes with COPY by
bench/alerts_page.py's generator: six organizations, five providers, a month of creation times; then ANALYZE),
the other stays empty. At each size, each run measures E1's p50 with wrk at a fixed, moderate connection count
and the Alerts page's first page for the admin, timed in-process from the first ASGI event to the last body byte
(bench/alerts_page.py's timer). At the largest size the empty store is measured beside each run, and the target
compares the two: minutes of bulk loading separate the 0-row and 1M-row runs, and a shared machine's load drifts
over minutes, so only figures taken at the same moment say what the rows themselves cost.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass

from bench import alerts_page, load
from bench.intake import ALERT, E1_PATH, SERVE, target
from bench.report import Figure, measured
from bench.server import Backend, Server, Store, Template, running, vigil_templates
from vigil.app import create_app
from vigil.db.session import Database
from vigil.settings import Settings

SECTION = "Growth (PostgreSQL)"
#: At most this much slower at the largest size than at 0 rows (the issue's target).
GROWTH_LIMIT = 1.5
CHUNK = 100_000
#: Key of the empty store's runs, beside the sizes' keys.
EMPTY = "empty"


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]
    connections: int
    seconds: float
    page_requests: int


FULL = Plan(sizes=(0, 100_000, 1_000_000), connections=4, seconds=4, page_requests=20)
SMOKE = Plan(sizes=(0, 1_000, 5_000), connections=4, seconds=1, page_requests=3)


def label(size: int) -> str:
    return f"{size // 1_000_000}M" if size >= 1_000_000 else f"{size // 1000}k" if size else "0"


class Page:
    """The console app in this process, signed in as the admin, timing the first page of /alerts."""

    def __init__(self, store: Store) -> None:
        settings = Settings(database_url=store.database_url, data_dir=store.data_dir)
        self.database = Database(settings)
        self.timer = alerts_page.ServerTimer(create_app(settings, self.database))
        self.client = alerts_page.signed_in_client(self.timer, "admin@bench.test")

    def first_page_ms(self, requests: int) -> float:
        samples, _rows = alerts_page.measure(self.client, self.timer, "/alerts", requests)
        return statistics.median(samples)

    def close(self) -> None:
        self.client.close()
        self.database.dispose()


@dataclass
class Subject:
    """A store with `vigil serve` on it and the console page timer: one side of the comparison."""

    store: Store
    server: Server
    page: Page
    organizations: dict[str, uuid.UUID]
    aim: load.Target

    def measure(self, plan: Plan, e1: list[float], pages: list[float]) -> None:
        """One run: E1 p50 (ms) with wrk, then the first page's median server time (ms)."""
        e1.append(load.run(self.aim, plan.connections, plan.seconds).p50_ms)
        pages.append(self.page.first_page_ms(plan.page_requests))


@contextmanager
def subject(template: Template) -> Iterator[Subject]:
    """A fresh clone with the console fixtures (organizations, playbooks, users) and a running server."""
    store = template.clone()
    try:
        fixtures = Database(Settings(database_url=store.database_url, data_dir=store.data_dir))
        organizations = alerts_page.seed_fixtures(fixtures)
        fixtures.dispose()
        with running(SERVE, store.env(), store.data_dir) as server:
            page = Page(store)
            try:
                yield Subject(store, server, page, organizations, target(server, E1_PATH, ALERT, template.api_key))
            finally:
                page.close()
    finally:
        store.drop()


def run(smoke: bool, runs: int) -> list[Figure]:
    """Measure at each size, loading the difference with COPY in between; at the largest size each run also
    measures an empty store served beside it, so the ratio compares two figures taken at the same moment."""
    plan = SMOKE if smoke else FULL
    e1: dict[int | str, list[float]] = defaultdict(list)
    pages: dict[int | str, list[float]] = defaultdict(list)
    loading: dict[int, float] = {}
    rng = random.Random(20261126)
    with vigil_templates(Backend.POSTGRES) as templates, ExitStack() as stack:
        growing = stack.enter_context(subject(templates[Backend.POSTGRES]))
        empty = stack.enter_context(subject(templates[Backend.POSTGRES]))
        loaded = 0
        for size in plan.sizes:
            began = time.monotonic()
            for start in range(loaded, size, CHUNK):  # chunks: the COPY buffer stays ~70 MB
                alerts_page.copy_alerts(growing.store.psycopg_url, growing.organizations, min(CHUNK, size - start), rng)
            loading[size], loaded = time.monotonic() - began, size
            print(f"growth: {label(size)} alerts (loaded in {loading[size]:.0f} s)", flush=True)
            sides = [(growing, size)] + ([(empty, EMPTY)] if size == plan.sizes[-1] else [])
            for side, _ in sides:
                load.run(side.aim, plan.connections, 1)  # warm-up after the bulk load
            for number in range(runs):  # the two sides take turns going first
                for side, key in sides if number % 2 == 0 else sides[::-1]:
                    side.measure(plan, e1[key], pages[key])
    return figures(plan, e1, pages, loading)


def figures(
    plan: Plan, e1: dict[int | str, list[float]], pages: dict[int | str, list[float]], loading: dict[int, float]
) -> list[Figure]:
    """Per size the absolute figures, the empty store beside the largest, and their ratio (run by run)."""
    e1_how = f"wrk, {plan.connections} connections, {plan.seconds:g} s"
    loaded = {size: f"COPY of the rows added before it: {seconds:.0f} s" for size, seconds in loading.items() if size}
    return [
        *series("E1 p50", e1, plan.sizes, {plan.sizes[0]: e1_how}),
        *series("Alerts page, first page", pages, plan.sizes, loaded),
    ]


def series(
    what: str, runs: dict[int | str, list[float]], sizes: tuple[int, ...], notes: dict[int, str]
) -> list[Figure]:
    last = sizes[-1]
    rows = [
        measured(SECTION, f"{what} at {label(size)} alerts", "ms", runs[size], note=notes.get(size, ""))
        for size in sizes
    ]
    beside = f"{what}, empty store beside the {label(last)} runs"
    rows.append(measured(SECTION, beside, "ms", runs[EMPTY], note="same moment as each run at the largest size"))
    ratios = [b / a for a, b in zip(runs[EMPTY], runs[last], strict=True)]
    rows.append(measured(SECTION, f"{what} at {label(last)} / empty beside it", "×", ratios, at_most=GROWTH_LIMIT))
    return rows


def description() -> dict[str, str]:
    return {
        SECTION: f"Two `vigil serve` on PostgreSQL: one store grows (alerts added between sizes with COPY by "
        "bench/alerts_page.py's generator, then ANALYZE), the other stays empty and is measured beside each run "
        "at the largest size; the target compares those two, taken at the same moment, because the minutes of "
        "bulk loading between the 0-row and the 1M-row runs let a shared machine's load drift. "
        f"E1: wrk with {FULL.connections} connections for {FULL.seconds:g} s, p50. Alerts page: the admin's first "
        f"page (50 rows), median server time of {FULL.page_requests} requests, in-process (first ASGI event to "
        "last body byte)."
    }
