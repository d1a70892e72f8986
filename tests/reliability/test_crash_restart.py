"""`vigil serve` killed with SIGKILL while alerts stream in, and stopped with SIGTERM under a backlog (issue 14
items 2 and 8), over real HTTP on both databases.

Senders post E1 alerts at a steady rate, each with its own Idempotency-Key, and re-send an unanswered one (as a
real client must: a request in flight when the server died may or may not be stored). The replacement must serve
within 5 s of being started (healthz 200 and a new alert's 201), every alert must be stored exactly once, and every
one investigated to the end with one case (the killed process's workflows are resumed by the replacement; that it
does so at once on the same host, not after `VIGIL_DEAD_WORKER_SECONDS`, is timed in tests/engine/test_worker_crash.py).
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from tests.reliability.record import record
from tests.support.harness import Harness
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.cases.models import Case

VIGIL = str(Path(sys.executable).with_name("vigil"))
SERVE_WITHIN = 5.0
STOP_WITHIN = 5.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Serve:
    """`vigil serve` on a fixed port and data directory, so a replacement takes over the same store."""

    db_url: str
    data_dir: Path
    name: str
    port: int = field(default_factory=free_port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spawn(self, **extra_env: str) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            "VIGIL_DATABASE_URL": self.db_url,
            "VIGIL_DATA_DIR": str(self.data_dir),
            "VIGIL_RATE_LIMIT_PER_SECOND": "100000",
            "VIGIL_RATE_LIMIT_BURST": "100000",
            "VIGIL_EXECUTOR_ID": self.name,
            "VIGIL_WORKER_CONCURRENCY": "8",
            **extra_env,
        }
        log = (self.data_dir.parent / f"{self.name}.log").open("ab")
        return subprocess.Popen([VIGIL, "serve", "--port", str(self.port)], env=env, stdout=log, stderr=log)

    def log_tail(self) -> str:
        return (self.data_dir.parent / f"{self.name}.log").read_text(errors="replace")[-3000:]


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> float:
    """Poll until `predicate` holds; returns the seconds it took."""
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.02)
    return time.monotonic() - started


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def cpu_seconds(process: subprocess.Popen[bytes]) -> float:
    """User + system CPU the process has used: what its start costs whatever else loads the machine."""
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def content(n: int) -> str:
    return f'{{"actor": {{"email": "user{n}@acme.example", "ip": "203.0.113.{n % 250}"}}, "n": {n}}}'


@dataclass
class Stream:
    """Posts `total` alerts at about `rate` per second; each is re-sent with its Idempotency-Key until answered."""

    harness: Harness
    url: str
    key: str
    total: int
    rate: float
    senders: int = 16
    acknowledged: dict[int, str] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    _next: itertools.count[int] = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self) -> list[threading.Thread]:
        started = time.monotonic()
        threads = [threading.Thread(target=self._send, args=(started,), daemon=True) for _ in range(self.senders)]
        for thread in threads:
            thread.start()
        return threads

    def _send(self, started: float) -> None:
        with httpx.Client(base_url=self.url, timeout=10) as http:
            while (n := next(self._next)) < self.total:
                time.sleep(max(0.0, started + n / self.rate - time.monotonic()))
                body = self.harness.alert_body(alert_content=content(n))
                headers = {"Authorization": f"Bearer {self.key}", "Idempotency-Key": f"crash-{n}"}
                while True:
                    try:
                        response = http.post("/serviceapi/alerts", json=body, headers=headers)
                    except httpx.TransportError:
                        time.sleep(0.05)  # the server is down: this alert is not acknowledged yet, send it again
                        continue
                    with self._lock:
                        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
                        if response.status_code in (200, 201):
                            self.acknowledged[n] = response.json()["alert_id"]
                    if response.status_code in (200, 201):
                        break
                    time.sleep(0.05)  # a 503 while the replacement starts: retry like a client would


def first_201(serve: Serve, harness: Harness, key: str) -> None:
    response = httpx.post(
        f"{serve.url}/serviceapi/alerts",
        json=harness.alert_body(alert_content=content(-1)),
        headers={"Authorization": f"Bearer {key}", "Idempotency-Key": "crash-probe"},
        timeout=5,
    )
    assert response.status_code == 201, response.text


def investigation_counts(harness: Harness) -> dict[int, int]:
    with harness.db.read() as session:
        rows = session.execute(select(Alert.investigation_status, func.count()).group_by(Alert.investigation_status))
        return {int(status): count for status, count in rows}


def stop(*processes: subprocess.Popen[bytes] | None) -> None:
    for process in processes:
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def all_investigated_once(harness: Harness, count: int) -> bool:
    with harness.db.read() as session:
        cases = session.execute(select(Case.alert_uuid, func.count()).group_by(Case.alert_uuid)).all()
    return (
        investigation_counts(harness) == {InvestigationStatus.COMPLETED: count}
        and len(cases) == count
        and all(n == 1 for _, n in cases)
    )


def kill_mid_stream_and_restart(
    harness: Harness, db_url: str, backend: str, tmp_path: Path, *, total: int, rate: float, long: bool
) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    serve = Serve(db_url, tmp_path / "data", f"crash-{backend}-{os.getpid()}-{free_port()}")
    process = serve.spawn()
    wait_until(lambda: answers(serve.url), 60, "vigil serve to start")
    stream = Stream(harness, serve.url, key, total, rate)
    threads = stream.run()
    replacement: subprocess.Popen[bytes] | None = None
    try:
        # Kill half-way, when investigations are running (workflows mid-step) and more are queued.
        wait_until(lambda: len(stream.acknowledged) >= total // 2, 120, "half the alerts acknowledged")
        wait_until(lambda: investigation_counts(harness).get(InvestigationStatus.IN_PROGRESS, 0) > 0, 60, "work")
        in_flight = investigation_counts(harness)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        replacement = serve.spawn()
        spawned = time.monotonic()
        health_after = wait_until(lambda: answers(serve.url), 60, "the replacement to answer healthz")
        first_201(serve, harness, key)
        created_after = time.monotonic() - spawned
        start_cpu, load = cpu_seconds(replacement), os.getloadavg()[0]
        for thread in threads:
            thread.join(timeout=300)
        sent = total + 1  # the probe's alert too
        investigated_after = wait_until(
            lambda: investigation_counts(harness).get(InvestigationStatus.COMPLETED, 0) == sent,
            600 if long else 180,
            "every alert investigated",
        )
        with harness.db.read() as session:
            per_content = select(Alert.alert_content, func.count()).group_by(Alert.alert_content)
            copies: dict[str, int] = dict(session.execute(per_content).tuples().all())
            per_alert = select(Case.alert_uuid, func.count()).group_by(Case.alert_uuid)
            cases = dict(session.execute(per_alert).all())
        final = investigation_counts(harness)
    finally:
        stop(process, replacement)

    stored_once = all(copies.get(content(n)) == 1 for n in range(-1, total)) and len(copies) == sent
    held = (
        len(stream.acknowledged) == total
        and stored_once
        and final == {InvestigationStatus.COMPLETED: sent}
        and len(cases) == sent
        and set(cases.values()) == {1}
        and max(health_after, created_after) <= SERVE_WITHIN
    )
    running, queued = (
        in_flight.get(status, 0) for status in (InvestigationStatus.IN_PROGRESS, InvestigationStatus.SUBMITTED)
    )
    record(
        f"SIGKILL of vigil serve during {total:,} E1 alerts at ~{rate:g}/s, then a replacement",
        sent,
        "alerts",
        held,
        "; ".join(
            [
                f"killed with {running} investigations running and {queued} queued",
                f"replacement healthz 200 after {health_after:.2f} s, first E1 201 after {created_after:.2f} s "
                f"(it used {start_cpu:.2f} s of CPU to get there; load average {load:.1f} on {os.cpu_count()} cores)",
                f"{len(stream.acknowledged):,} of {total:,} acknowledged (responses {sorted(stream.statuses.items())})",
                f"each stored once: {stored_once}",
                f"final statuses {final}, {len(cases):,} cases, max per alert {max(cases.values(), default=0)}",
                f"all investigated {investigated_after:.1f} s after the replacement served",
            ]
        ),
        backend=backend,
        long=long,
    )
    assert len(stream.acknowledged) == total, stream.statuses
    assert stored_once, "an alert was lost or stored twice"
    assert final == {InvestigationStatus.COMPLETED: sent}, final
    assert len(cases) == sent and set(cases.values()) == {1}
    assert health_after <= SERVE_WITHIN and created_after <= SERVE_WITHIN, (health_after, created_after)


@pytest.mark.slow
@pytest.mark.serial
def test_sigkill_mid_stream_replacement_serves_fast_and_loses_nothing(
    harness: Harness, db_url: str, backend: str, tmp_path: Path
) -> None:
    kill_mid_stream_and_restart(harness, db_url, backend, tmp_path, total=120, rate=60, long=False)


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.reliability_long
def test_sigkill_during_two_thousand_alerts_at_two_hundred_per_second(
    harness: Harness, db_url: str, backend: str, tmp_path: Path
) -> None:
    kill_mid_stream_and_restart(harness, db_url, backend, tmp_path, total=2000, rate=200, long=True)


@pytest.mark.slow
@pytest.mark.serial
def test_sigterm_under_a_backlog_stops_fast_and_the_next_start_finishes_it(
    harness: Harness, db_url: str, backend: str, tmp_path: Path
) -> None:
    """Eight investigations are inside a 10 s step (as behind a slow vendor) and hundreds wait when SIGTERM comes:
    the stop must not wait for them; the next start resumes the interrupted ones and runs the rest."""
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    serve = Serve(db_url, tmp_path / "data", f"sigterm-{backend}-{os.getpid()}-{free_port()}")
    process = serve.spawn(VIGIL_ENGINE_STEP_DELAY_SECONDS="10")
    replacement: subprocess.Popen[bytes] | None = None
    backlog = 120
    try:
        wait_until(lambda: answers(serve.url), 60, "vigil serve to start")
        response = httpx.post(
            f"{serve.url}/serviceapi/alerts/batch",
            json={"alerts": [harness.alert_body(alert_content=content(n)) for n in range(backlog)]},
            headers={"Authorization": f"Bearer {key}"},
            timeout=60,
        )
        assert response.status_code == 200 and response.json()["created"] == backlog, response.text
        wait_until(lambda: investigation_counts(harness).get(InvestigationStatus.IN_PROGRESS, 0) >= 8, 60, "work")
        running = investigation_counts(harness).get(InvestigationStatus.IN_PROGRESS, 0)
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        process.wait(60)
        stopped_after, load = time.monotonic() - signalled, os.getloadavg()[0]
        replacement = serve.spawn()
        wait_until(lambda: answers(serve.url), 60, "the next start")
        finished_after = wait_until(lambda: all_investigated_once(harness, backlog), 300, "the backlog investigated")
    finally:
        stop(process, replacement)
    # uvicorn ends a graceful shutdown by re-raising the signal it caught: exit status -SIGTERM, not a crash.
    clean_exit = process.returncode == -signal.SIGTERM
    record(
        f"SIGTERM of vigil serve with {backlog:,} investigations unfinished, 8 of them inside a 10 s step",
        backlog,
        "alerts",
        stopped_after <= STOP_WITHIN and clean_exit,
        f"{running} running when signalled; exited (status {process.returncode}) {stopped_after:.2f} s after SIGTERM "
        f"(load average {load:.1f} on {os.cpu_count()} cores); the next start finished all {backlog:,} with one case "
        f"each {finished_after:.1f} s after it served",
        backend=backend,
    )
    assert clean_exit, serve.log_tail()
    assert stopped_after <= STOP_WITHIN, f"stopped after {stopped_after:.2f} s"
