"""Growth: E1 latency and the console's Alerts page as the alerts table grows from 0 to 100k to 1M rows.

One PostgreSQL store, one `vigil serve`; between measurements alerts are bulk-loaded with COPY (bench/alerts_page.py's
generator: six organizations, five providers, a month of creation times), then ANALYZEd. At each size, each run
measures E1's p50 with wrk at a fixed, moderate connection count and the Alerts page's first page for the admin,
timed in-process from the first ASGI event to the last body byte (bench/alerts_page.py's timer).
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

from bench import alerts_page, load
from bench.intake import ALERT, E1_PATH, SERVE, target
from bench.report import Figure, measured
from bench.server import Backend, Server, Store, running, vigil_templates
from vigil.app import create_app
from vigil.db.session import Database
from vigil.settings import Settings

SECTION = "Growth (PostgreSQL)"
#: At most this much slower at the largest size than at 0 rows (the issue's target).
GROWTH_LIMIT = 1.5
CHUNK = 100_000


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


def measure_size(plan: Plan, server: Server, page: Page, api_key: str, runs: int) -> tuple[list[float], list[float]]:
    """Per run: E1 p50 (ms) and the first page's median server time (ms)."""
    aim = target(server, E1_PATH, ALERT, api_key)
    load.run(aim, plan.connections, 1)  # warm-up after the bulk load
    e1, pages = [], []
    for _ in range(runs):
        e1.append(load.run(aim, plan.connections, plan.seconds).p50_ms)
        pages.append(page.first_page_ms(plan.page_requests))
    return e1, pages


def run(smoke: bool, runs: int) -> list[Figure]:
    """Measure at each size, loading the difference with COPY in between."""
    plan = SMOKE if smoke else FULL
    e1: dict[int, list[float]] = {}
    pages: dict[int, list[float]] = {}
    loading: dict[int, float] = {}
    rng = random.Random(20261126)
    with vigil_templates(Backend.POSTGRES) as templates:
        template = templates[Backend.POSTGRES]
        store = template.clone()
        try:
            fixtures = Database(Settings(database_url=store.database_url, data_dir=store.data_dir))
            organizations = alerts_page.seed_fixtures(fixtures)
            fixtures.dispose()
            with running(SERVE, store.env(), store.data_dir) as server:
                page = Page(store)
                try:
                    loaded = 0
                    for size in plan.sizes:
                        began = time.monotonic()
                        for start in range(loaded, size, CHUNK):  # chunks: the COPY buffer stays ~70 MB
                            alerts_page.copy_alerts(store.psycopg_url, organizations, min(CHUNK, size - start), rng)
                        loading[size], loaded = time.monotonic() - began, size
                        print(f"growth: {label(size)} alerts (loaded in {loading[size]:.0f} s)", flush=True)
                        e1[size], pages[size] = measure_size(plan, server, page, template.api_key, runs)
                finally:
                    page.close()
        finally:
            store.drop()
    return figures(plan, e1, pages, loading)


def figures(
    plan: Plan, e1: dict[int, list[float]], pages: dict[int, list[float]], loading: dict[int, float]
) -> list[Figure]:
    """Per size the absolute figures, then the largest size over 0 rows (each run paired with its own)."""
    e1_how = f"wrk, {plan.connections} connections, {plan.seconds:g} s"
    loaded = {size: f"COPY of the rows added before it: {seconds:.0f} s" for size, seconds in loading.items() if size}
    return [
        *series("E1 p50", e1, plan.sizes, {plan.sizes[0]: e1_how}),
        *series("Alerts page, first page", pages, plan.sizes, loaded),
    ]


def series(what: str, runs: dict[int, list[float]], sizes: tuple[int, ...], notes: dict[int, str]) -> list[Figure]:
    first, last = sizes[0], sizes[-1]
    rows = [
        measured(SECTION, f"{what} at {label(size)} alerts", "ms", runs[size], note=notes.get(size, ""))
        for size in sizes
    ]
    ratios = [b / a for a, b in zip(runs[first], runs[last], strict=True)]
    rows.append(measured(SECTION, f"{what} at {label(last)} / at {label(first)}", "×", ratios, at_most=GROWTH_LIMIT))
    return rows


def description() -> dict[str, str]:
    return {
        SECTION: f"One `vigil serve` on PostgreSQL; alerts added between sizes with COPY (bench/alerts_page.py's "
        f"generator, then ANALYZE). E1: wrk with {FULL.connections} connections for {FULL.seconds:g} s, p50. "
        f"Alerts page: the admin's first page (50 rows), median server time of {FULL.page_requests} requests, "
        "in-process (first ASGI event to last body byte). A ratio row pairs each run at the largest size with "
        "the same run at 0 rows."
    }
