"""`python -m bench`: every benchmark, then docs/benchmarks.md rewritten with the figures side by side.

    .venv/bin/python -m bench                      # full run (3 runs per figure), rewrites docs/benchmarks.md
    .venv/bin/python -m bench --smoke              # tiny counts, one run each; writes a temporary file instead
    .venv/bin/python -m bench --only intake growth # some sections; --runs N, --out PATH

Only a full run of every section rewrites docs/benchmarks.md by default: a smoke run or a partial run writes a
temporary file (unless --out says where), so the committed figures always come from one complete run.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import growth, intake, investigations, machine, report
from bench.alerts_page import PG_ADMIN_URL
from bench.load import ensure_wrk
from bench.notes import NOTES
from bench.server import REPO, Backend, ensure_postgres, vigil_templates

DOC = REPO / "docs" / "benchmarks.md"
HEADER = """\
## Intake, engine and growth (issue 13)

Written by `python -m bench` ({when}, {minutes:.1f} min{mode}). Each figure is the median of its runs with the
lowest and highest beside it; a target is met when the median reaches it. The note column says how a figure was
taken and, where a target is missed, why (`bench/notes.py`). Rerun it on an otherwise idle machine: the
servers, the load generator and PostgreSQL share its cores."""


SECTIONS: dict[str, Callable[[bool, int], list[report.Figure]]] = {
    "intake": intake.run,
    "growth": growth.run,
    "investigations": investigations.run,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--smoke", action="store_true", help="tiny counts, one run each (CI); keeps the doc")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run only these sections")
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (default 3; smoke: 1)")
    parser.add_argument("--out", type=Path, help=f"where to write (default {DOC.relative_to(REPO)} after a full run)")
    args = parser.parse_args(argv)
    runs = 1 if args.smoke else args.runs
    only = args.only or list(SECTIONS)
    out = args.out or (DOC if not args.smoke and not args.only else temporary_doc())

    launched = time.monotonic()
    ensure_postgres()
    ensure_wrk()
    started = time.monotonic()
    figures: list[report.Figure] = []
    durations: dict[str, float] = {}
    needed = tuple(Backend) if {"intake", "growth"} & set(only) else ()
    with vigil_templates(*needed):  # set up once with the CLI, cloned by every section's runs
        print(f"set-up (PostgreSQL, wrk, stores made with the CLI): {time.monotonic() - launched:.0f} s", flush=True)
        for name in only:
            began = time.monotonic()
            figures += SECTIONS[name](args.smoke, runs)
            durations[name] = time.monotonic() - began
            print(f"{name}: {durations[name]:.0f} s", flush=True)
    minutes = (time.monotonic() - started) / 60
    mode = ", smoke" if args.smoke else f", {runs} runs"
    spent = ", ".join(f"{name} {seconds / 60:.1f} min" for name, seconds in durations.items())
    header = HEADER.format(when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), minutes=minutes, mode=mode)
    text = report.generated(
        figures,
        machine.facts(PG_ADMIN_URL),
        commands=commands(argv),
        descriptions=intake.description() | growth.description(),
        notes=NOTES,
        header=f"{header}\n\nTime per section: {spent}.",
    )
    report.write_markdown(out, text)
    print(f"\nwrote {out}" + ("" if out == DOC else f" (not {DOC.relative_to(REPO)})"))
    if args.smoke:
        print(text)
    missed = [f for f in figures if f.met is False]
    names = "; ".join(f"{figure.section} / {figure.name}" for figure in missed)
    print(f"{len(figures)} figures, {len(missed)} below target: {names}")


def temporary_doc() -> Path:
    """A copy of docs/benchmarks.md to write into, so a smoke run shows the result without touching the doc."""
    path = Path(tempfile.mkdtemp(prefix="vigil-bench-")) / "benchmarks.md"
    if DOC.exists():
        path.write_text(DOC.read_text())
    return path


def commands(argv: list[str] | None) -> list[str]:
    """The commands that reproduce this file."""
    given = shlex.join(argv if argv is not None else sys.argv[1:])
    lines = [
        "bash scripts/ensure-postgres.sh   # the local cluster (python -m bench also starts it)",
        f".venv/bin/python -m bench {given}".rstrip() + "   # this run",
    ]
    if given != "--smoke":
        lines.append(".venv/bin/python -m bench --smoke   # CI's quick check; writes a temporary file")
    return lines


if __name__ == "__main__":
    main()
