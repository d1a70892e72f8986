"""Why a figure misses its target: the lead's explanations, printed in the note column of docs/benchmarks.md.

Keys are "<section> / <figure name>" exactly as the tables show them, e.g.
"E1 intake (PostgreSQL) / Vigil untyped: p99 at 50 % of saturation". A row that misses its target and has
no entry here says "explanation pending".
"""

from __future__ import annotations

_E1_CPU = (
    "one `vigil serve` is bound by one GIL: measured in-process (cProfile on thread CPU) an E1 request costs "
    "0.54 ms of event-loop CPU, about half of it FastAPI's routing and dependency resolution (a bare FastAPI "
    "route with the same body: 0.12 ms), plus 0.1 ms in the intake writer and 0.08 ms of access log. Was 115/s "
    "(a counter-row lock per request); group commit, COPY, the key memo and one dependency brought it here. "
    "Plan: serve E1/batch from a lean ASGI route ahead of FastAPI's router, and several server processes "
    "(the counter lock is held per group, so processes add up)"
)
_E1_TAIL = (
    "at half load a request waits for the group being committed, then its own commit, and shares the GIL with "
    "the writer (and, typed, the engine); py-spy shows the tail in GIL hand-offs and collection pauses. Plan: "
    "the lean route above, and start the next group while the previous commit is in flight"
)
_TYPED = (
    "typed alerts are also investigated in the same process: about 50 ms of engine CPU per investigation "
    "competes with intake for one GIL. In production run `vigil worker` processes beside `vigil serve` "
    "(README); plan: a setting that keeps `vigil serve` out of investigations when workers run"
)
_BATCH = (
    "about 32 ms of server CPU per 500-alert request, one GIL: the intake writer 21 ms (COPY itself costs the "
    "database 3.5 ms per 500), the rest validating 500 items and serialising 500 results. Plan: validate the "
    "list with one TypeAdapter and serialise the results without re-validating them; several server processes"
)
_ENGINE_CPU = (
    "one worker is CPU-bound at about 50 ms of CPU per investigation (yappi: spread over DBOS's four statements "
    "per step, the ORM's CPU per statement and the analyst; was 137-184 ms before this issue: related-alert "
    "extraction cache, 8 → 5 steps, upserts, cached templates). Plan: Core statements in step bodies, fewer "
    "DBOS steps per read-only skill run, more worker processes on more cores"
)

NOTES: dict[str, str] = {
    "E1 intake (PostgreSQL) / Vigil untyped: alerts/s at saturation": _E1_CPU,
    "E1 intake (PostgreSQL) / Vigil untyped: share of the baseline": _E1_CPU,
    "E1 intake (PostgreSQL) / Vigil untyped: p99 at 50 % of saturation": _E1_TAIL,
    "E1 intake (PostgreSQL) / Vigil typed: alerts/s at saturation": _TYPED,
    "E1 intake (PostgreSQL) / Vigil typed: share of the baseline": _TYPED,
    "E1 intake (PostgreSQL) / Vigil typed: p99 at 50 % of saturation": f"{_TYPED}; {_E1_TAIL}",
    "E1 intake (SQLite) / Vigil untyped: alerts/s at saturation": _E1_CPU,
    "E1 intake (SQLite) / Vigil untyped: p99 at 50 % of saturation": _E1_TAIL,
    "E1 intake (SQLite) / Vigil typed: alerts/s at saturation": _TYPED,
    "E1 intake (SQLite) / Vigil typed: p99 at 50 % of saturation": f"{_TYPED}; {_E1_TAIL}",
    "Batch intake (POST /serviceapi/alerts/batch, 500 alerts per request) / PostgreSQL: alerts/s": _BATCH,
    "Batch intake (POST /serviceapi/alerts/batch, 500 alerts per request) / SQLite: alerts/s": _BATCH,
    "Investigation engine (PostgreSQL) / Investigations/s, 1 worker, 0 ms fakes": _ENGINE_CPU,
    "Investigation engine (PostgreSQL) / Investigations/s, 2 workers, 0 ms fakes": _ENGINE_CPU,
    "Investigation engine (PostgreSQL) / 2 workers ÷ 1 worker, 0 ms fakes": (
        "two cores also run PostgreSQL, the API process and the vendor fakes, so a second worker gets far less "
        "than a core of its own; worker CPU per investigation is the same with two (see the throughput rows), so "
        "the engine divides the work and the machine runs out. Plan: re-measure on ≥ 4 cores"
    ),
    "Investigation engine (PostgreSQL) / Engine overhead per investigation, p50 (enqueued → completed − skill time)": (
        "DBOS queues are polled: at 0.2 s, 182 ms of the 247 ms p50 was waiting in the queue; the default is now "
        "0.05 s (71 ms measured, 53 ms of it dequeue → completion). Plan: wake the queue runner on enqueue"
    ),
}
