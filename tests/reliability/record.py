"""What each reliability scenario proved, kept for docs/reliability.md.

A scenario calls `record(...)` with what it exercised and whether the promise held, then asserts. Every pytest
process (xdist workers included) appends one JSON line per call to one file, so `python -m tests.reliability.report`
can turn a run into the table. The file is `$VIGIL_RELIABILITY_LOG`, default `.reliability/results.jsonl` at the
repository root (git-ignored).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def log_path() -> Path:
    return Path(os.environ.get("VIGIL_RELIABILITY_LOG", ROOT / ".reliability" / "results.jsonl"))


@dataclass(frozen=True)
class Result:
    scenario: str  # what was done to the service, in a sentence fragment
    count: int  # how many requests, alerts, deliveries, ... the scenario exercised
    unit: str  # what `count` counts ("requests", "alerts")
    held: bool  # whether every promise the scenario checks held
    detail: str  # the measured figures behind `held` (e.g. "0 of 2,143 responses >= 500")
    backend: str = ""  # "sqlite", "postgresql" or "" when no database is involved
    long: bool = False  # part of the long suite (`make reliability`) rather than `make test`
    at: float = 0.0


def record(
    scenario: str, count: int, unit: str, held: bool, detail: str, *, backend: str = "", long: bool = False
) -> None:
    """Append one result line (a single write, so concurrent xdist workers never interleave)."""
    path = log_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    result = Result(scenario, count, unit, held, detail, backend, long, time.time())
    line = (json.dumps(asdict(result), sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
