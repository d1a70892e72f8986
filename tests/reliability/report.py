"""Turn recorded reliability results into docs/reliability.md's table.

    python -m tests.reliability.report [--log .reliability/results.jsonl] [--out docs/reliability.md]

The table is written between two marker lines of the document, so the prose around it stays hand-written. When a
scenario ran more than once (several runs), each backend and suite keeps its latest result.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

from tests.reliability.record import ROOT, Result, log_path

BEGIN = "<!-- reliability-table:begin -->"
END = "<!-- reliability-table:end -->"


def load(path: Path) -> list[Result]:
    latest: dict[tuple[str, str], Result] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            result = Result(**json.loads(line))
            key = (result.scenario, result.backend, result.long)
            if key not in latest or latest[key].at <= result.at:
                latest[key] = result
    return sorted(latest.values(), key=lambda r: (r.long, r.scenario, r.backend))


def table(results: list[Result]) -> str:
    rows = [
        "| Scenario | Database | Suite | Count | Held | Measured |",
        "|---|---|---|---:|:---:|---|",
    ]
    for r in results:
        suite = "long (`make reliability`)" if r.long else "fast (`make test`)"
        held = "yes" if r.held else "**NO**"
        rows.append(f"| {r.scenario} | {r.backend or '-'} | {suite} | {r.count:,} {r.unit} | {held} | {r.detail} |")
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    machine = f"{platform.node() or 'unknown host'}, Python {platform.python_version()}, {platform.machine()}"
    return "\n".join([f"Last written {stamp} on {machine}.", "", *rows])


def write(results: list[Result], out: Path) -> None:
    text = out.read_text() if out.exists() else f"# Reliability\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text or END not in text:
        text = text.rstrip() + f"\n\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    out.write_text(f"{head}{BEGIN}\n{table(results)}\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", type=Path, default=log_path())
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "reliability.md")
    args = parser.parse_args(argv)
    if not args.log.exists():
        print(f"no results at {args.log}: run the reliability tests first", file=sys.stderr)
        return 1
    results = load(args.log)
    write(results, args.out)
    failed = [r for r in results if not r.held]
    print(f"{len(results)} scenarios, {len(failed)} did not hold -> {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
