"""The load generator: `wrk` (Debian's package) with a Lua script written per run that reports JSON.

The script's `done()` hook prints requests, duration, latency percentiles, socket errors and every status code
seen (counted per thread by a `response()` hook), so nothing depends on wrk's human-readable output. wrk has no
fixed-rate mode; for "50 % of saturation" each connection waits in a `delay()` hook so the offered rate is
about half the saturation rate, and the rate actually achieved is reported beside the latencies.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

LUA = """
wrk.method = "POST"
wrk.body = {body}
{headers}
local delay_ms = {delay_ms}
local threads = {{}}
codes = {{}}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  codes = {{}}
end

if delay_ms > 0 then
  function delay()
    return delay_ms
  end
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
end

function done(summary, latency, requests)
  local merged = {{}}
  for _, thread in ipairs(threads) do
    local seen = thread:get("codes")
    for status, count in pairs(seen) do
      merged[tostring(status)] = (merged[tostring(status)] or 0) + count
    end
  end
  local parts = {{}}
  for status, count in pairs(merged) do
    table.insert(parts, string.format('"%s": %d', status, count))
  end
  local e = summary.errors
  io.write(string.format(
    '\\nWRK-JSON {{"requests": %d, "duration_us": %d, "connect": %d, "read": %d, "write": %d, "timeout": %d, '
      .. '"p50_us": %d, "p99_us": %d, "codes": {{%s}}}}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), table.concat(parts, ", ")))
end
"""


def lua_string(text: str) -> str:
    """A Lua long-bracket literal that holds `text` verbatim (no escaping rules to get wrong)."""
    level = 0
    while f"]{'=' * level}]" in text:
        level += 1
    return f"[{'=' * level}[{text}]{'=' * level}]"


def ensure_wrk() -> str:
    """Path of wrk, installed from Debian's packages if missing (the machine runs as root)."""
    found = shutil.which("wrk")
    if found:
        return found
    print("wrk is missing: apt-get install -y wrk", flush=True)
    install = ["apt-get", "install", "-y", "-q", "wrk"]
    if subprocess.run(install, check=False, env=os.environ | {"DEBIAN_FRONTEND": "noninteractive"}).returncode:
        subprocess.run(["apt-get", "update", "-q"], check=True)
        subprocess.run(install, check=True)
    found = shutil.which("wrk")
    if not found:
        raise RuntimeError("wrk could not be installed")
    return found


@dataclass(frozen=True)
class Target:
    """What every request of a run is: URL, JSON body and headers (the same for Vigil and the baseline)."""

    url: str
    body: str
    headers: Mapping[str, str]


@dataclass(frozen=True)
class Result:
    """One wrk run."""

    connections: int
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    codes: Mapping[int, int]
    socket_errors: int

    @property
    def ok(self) -> int:
        """2xx answers."""
        return sum(count for status, count in self.codes.items() if 200 <= status < 300)

    @property
    def non_2xx(self) -> int:
        return self.requests - self.ok

    @property
    def rate(self) -> float:
        """Successful requests per second."""
        return self.ok / self.seconds if self.seconds else 0.0

    def count(self, status: int) -> int:
        return self.codes.get(status, 0)


def script(target: Target, delay_ms: int = 0) -> str:
    """The Lua script of one run."""
    headers = "\n".join(f"wrk.headers[ {lua_string(k)} ] = {lua_string(v)}" for k, v in target.headers.items())
    return LUA.format(body=lua_string(target.body), headers=headers, delay_ms=int(delay_ms))


def run(target: Target, connections: int, seconds: float, delay_ms: int = 0) -> Result:
    """One wrk run against `target` with `connections` open connections for `seconds`."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", prefix="vigil-bench-") as lua:
        lua.write(script(target, delay_ms))
        lua.flush()
        threads = max(1, min(2, connections))
        seconds = max(1, round(seconds))  # wrk takes whole seconds
        command = [ensure_wrk(), f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s"]
        done = subprocess.run(
            [*command, "-s", lua.name, target.url], capture_output=True, text=True, check=False, timeout=seconds + 60
        )
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("WRK-JSON ")), None)
    if done.returncode or line is None:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stdout}{done.stderr}")
    data = json.loads(line.removeprefix("WRK-JSON "))
    return Result(
        connections=connections,
        requests=data["requests"],
        seconds=data["duration_us"] / 1e6,
        p50_ms=data["p50_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        codes={int(status): count for status, count in data["codes"].items()},
        socket_errors=sum(data[k] for k in ("connect", "read", "write", "timeout")),
    )


def best_connections(target: Target, levels: tuple[int, ...], seconds: float) -> int:
    """The connection count at which the server answers the most alerts per second."""
    if len(levels) == 1:
        return levels[0]
    results = [run(target, level, seconds) for level in levels]
    return max(results, key=lambda result: result.rate).connections


def at_rate(target: Target, rate: float, seconds: float, probe_seconds: float) -> Result:
    """Offer about `rate` requests/s: enough connections that each pause about 20 ms between requests.

    A short probe (unless `probe_seconds` is 0) measures how long one request takes at about this pace; the
    connection count and the pause are then set from it, so the offered rate lands near `rate` even when a
    request takes longer than the pause.
    """
    connections = max(2, math.ceil(rate * 0.02))
    pause = max(1, round(connections * 1000 / rate))
    probe = run(target, connections, probe_seconds, delay_ms=pause) if probe_seconds else None
    if probe and probe.rate > 0:
        service_ms = max(0.0, connections * 1000 / probe.rate - pause)
        connections = max(2, math.ceil(rate * (service_ms + 20) / 1000))
        pause = max(1, round(connections * 1000 / rate - service_ms))
    return run(target, connections, seconds, delay_ms=pause)
