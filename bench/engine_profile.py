"""Profile the investigation engine: the benchmark's rig with the engine in this process under yappi.

yappi (a dev tool, ``.venv/bin/pip install yappi``; not a dependency) profiles every thread, which cProfile
cannot: DBOS runs each workflow on a thread of its own. Prints the top functions by own and by total CPU time,
and the wall clock per investigation.

    .venv/bin/python -m bench.engine_profile [--alerts 200] [--latency-ms 0] [--sort ttot|tsub] [--top 40]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from bench.investigations import Fakes, Rig
from vigil.investigations.engine import build_engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--alerts", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    import yappi  # type: ignore[import-not-found, unused-ignore]

    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="vigil-engine-profile-")))
        fakes = Fakes(stack)
        rig = stack.enter_context(Rig(fakes, workdir).running())
        fakes.latency(args.latency_ms / 1000)
        settings = rig.settings.model_copy(update={"executor_id": "profile", "data_dir": workdir / "engine"})
        engine = build_engine(settings, rig.harness.db, role="profile")
        engine.start()
        try:
            rig.wait_finished(rig.send(20), timeout=120)  # warm: token cache, pools, imports
            yappi.set_clock_type(args.clock)
            yappi.start(builtins=False)
            started = time.monotonic()
            uuids = rig.send(args.alerts)
            engine.wake()
            rig.wait_finished(uuids, timeout=600)
            elapsed = time.monotonic() - started
            yappi.stop()
        finally:
            engine.stop()
        print(f"{args.alerts} investigations in {elapsed:.1f} s ({args.alerts / elapsed:.1f}/s) in-process")
        print("DBOS step medians (ms):", rig.step_breakdown(uuids))
        stats = yappi.get_func_stats()
        for sort in ("tsub", "ttot"):
            print(f"\n--- top {args.top} by {sort} ({args.clock} clock) ---")
            stats.sort(sort, "desc")
            for row in list(stats)[: args.top]:
                where = f"{Path(row.module).name}:{row.lineno}"
                print(f"{row.ttot:8.2f} {row.tsub:8.2f} {row.ncall:8d}  {row.name}  {where}")


if __name__ == "__main__":
    main()
