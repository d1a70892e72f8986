"""A private PostgreSQL cluster stopped, and frozen with SIGSTOP, under a `vigil serve` doing intake and
investigations.

Promises checked (docs/intake.md, "Timeouts and a sick database"): no request is held longer than the documented
bound; every 201 (or idempotent 200) is stored exactly once, and client retries with the same Idempotency-Key never
store an alert twice; every 503 carries Retry-After; /readyz turns false within 5 s and ready again after; every
investigation finishes after recovery (none left Created, Submitted or InProgress).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from tests.reliability.record import record
from tests.support.harness import Harness
from tests.support.pg_cluster import PgCluster, free_port
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.settings import Settings

VIGIL = str(Path(sys.executable).with_name("vigil"))
#: What the loaded 2-core test machine may add to a bound (HTTP, scheduling, the fault tooling itself).
SLACK_SECONDS = 1.5
READY_WITHIN_SECONDS = 5.0
UNFINISHED = (InvestigationStatus.CREATED, InvestigationStatus.SUBMITTED, InvestigationStatus.IN_PROGRESS)


@dataclass(frozen=True)
class Profile:
    """The server's bounds for one run; `bound` is what the docs promise a request."""

    request_timeout: float
    statement_timeout_ms: int
    readiness_timeout: float
    connect_timeout: int

    @property
    def bound(self) -> float:
        return max(self.request_timeout, self.connect_timeout)

    def environment(self) -> dict[str, str]:
        return {
            "VIGIL_DB_REQUEST_TIMEOUT_SECONDS": str(self.request_timeout),
            "VIGIL_DB_STATEMENT_TIMEOUT_MS": str(self.statement_timeout_ms),
            "VIGIL_DB_LOCK_TIMEOUT_MS": str(min(self.statement_timeout_ms, 3_000)),
            "VIGIL_READINESS_TIMEOUT_SECONDS": str(self.readiness_timeout),
            "VIGIL_DB_CONNECT_TIMEOUT_SECONDS": str(self.connect_timeout),
        }


DEFAULTS = Profile(request_timeout=6.0, statement_timeout_ms=5_000, readiness_timeout=2.0, connect_timeout=5)
SHORT = Profile(request_timeout=2.0, statement_timeout_ms=1_000, readiness_timeout=1.0, connect_timeout=2)


@dataclass
class Traffic:
    """Everything the clients saw, stamped with time.monotonic()."""

    requests: list[tuple[str, int, float, bool]] = field(default_factory=list)  # kind, status, seconds, Retry-After
    readiness: list[tuple[float, int, float]] = field(default_factory=list)  # sent at, status, seconds taken
    acknowledged: dict[str, str] = field(default_factory=dict)  # alert_id -> content (201 or replay 200)
    replays: int = 0  # 200s: a retry after a 503 whose alert had committed late, answered by its Idempotency-Key
    lock: threading.Lock = field(default_factory=threading.Lock)


def start_server(url: str, tmp_path: Path, profile: Profile) -> tuple[subprocess.Popen[bytes], str]:
    """`vigil serve` on the cluster, once /readyz says ready; returns the process and its base URL."""
    env = {
        **os.environ,
        **profile.environment(),
        "VIGIL_DATABASE_URL": url,
        "VIGIL_DATA_DIR": str(tmp_path / "data"),
        "VIGIL_RATE_LIMIT_PER_SECOND": "100000",
        "VIGIL_RATE_LIMIT_BURST": "100000",
        "VIGIL_EXECUTOR_ID": f"db-faults-{os.getpid()}-{time.monotonic_ns()}",
        "VIGIL_QUEUE_POLL_SECONDS": "0.1",
        "VIGIL_HEARTBEAT_SECONDS": "0.5",
        "VIGIL_WORKER_CONCURRENCY": "4",
        "VIGIL_RETRY_BACKOFF_SECONDS": "0.5",
    }
    log = (tmp_path / "serve.log").open("ab")
    port = free_port()
    process = subprocess.Popen(
        [VIGIL, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path
    )
    deadline = time.monotonic() + 90
    while True:
        assert process.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200:
                return process, f"http://127.0.0.1:{port}"
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "vigil serve did not start"
        time.sleep(0.2)


def send_alerts(base: str, key: str, sender: int, traffic: Traffic, stop: threading.Event, pause: float) -> None:
    """Each alert is retried with its Idempotency-Key until it is acknowledged, as a well-behaved client does."""
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, timeout=60) as http:
        number = 0
        while not stop.is_set():
            content = f"sender {sender} alert {number}"
            body = Harness.alert_body(
                provider="okta",
                alert_type="Suspicious sign-in" if number % 4 == 0 else None,  # a share is investigated
                alert_content=content,
            )
            while True:
                started = time.monotonic()
                response = http.post("/serviceapi/alerts", json=body, headers={**headers, "Idempotency-Key": content})
                with traffic.lock:
                    traffic.requests.append(
                        ("intake", response.status_code, time.monotonic() - started, "retry-after" in response.headers)
                    )
                if response.status_code in (200, 201):
                    with traffic.lock:
                        traffic.acknowledged[response.json()["alert_id"]] = content
                        traffic.replays += response.status_code == 200
                    break
                time.sleep(0.2)
            number += 1
            time.sleep(pause)


def read_alerts(base: str, key: str, traffic: Traffic, stop: threading.Event) -> None:
    with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {key}"}) as http:
        while not stop.is_set():
            started = time.monotonic()
            response = http.get("/serviceapi/alerts", params={"limit": 20})
            with traffic.lock:
                traffic.requests.append(
                    ("list", response.status_code, time.monotonic() - started, "retry-after" in response.headers)
                )
            time.sleep(0.1)


def probe_readiness(base: str, traffic: Traffic, stop: threading.Event) -> None:
    with httpx.Client(base_url=base, timeout=60) as http:
        while not stop.is_set():
            started = time.monotonic()
            status = http.get("/readyz").status_code
            with traffic.lock:
                traffic.readiness.append((started, status, time.monotonic() - started))
            time.sleep(0.2)


def run_fault(
    fault: str, seconds: float, profile: Profile, senders: int, pause: float, tmp_path: Path, *, long: bool
) -> None:
    with PgCluster() as cluster:
        url = cluster.create_database("vigil")
        server, base = start_server(url, tmp_path, profile)
        try:
            with Harness(Settings(database_url=url, data_dir=tmp_path / "setup")) as setup:
                setup.add_org("ACME")
                key = setup.add_key("ACME").api_key
                traffic, stop, probes_stop = Traffic(), threading.Event(), threading.Event()
                threads = [
                    threading.Thread(target=send_alerts, args=(base, key, n, traffic, stop, pause))
                    for n in range(senders)
                ]
                threads.append(threading.Thread(target=read_alerts, args=(base, key, traffic, stop)))
                prober = threading.Thread(target=probe_readiness, args=(base, traffic, probes_stop))
                for thread in [*threads, prober]:
                    thread.start()
                time.sleep(3)
                injure, heal = _fault(cluster, fault)
                faulted_at = time.monotonic()
                injure()
                time.sleep(seconds)
                heal()
                healed_at = time.monotonic()
                time.sleep(5)
                stop.set()
                for thread in threads:
                    thread.join(timeout=120)
                ready_again_at = _wait_ready(traffic, healed_at)
                probes_stop.set()
                prober.join(timeout=30)
                finished = _wait_investigations(setup, timeout=180)
                with setup.db.read() as session:
                    rows = session.execute(select(Alert.alert_id, Alert.alert_content))
                    stored = {alert_id: content for alert_id, content in rows}
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()

    _judge(fault, seconds, profile, traffic, stored, finished, faulted_at, ready_again_at - healed_at, long=long)


def _fault(cluster: PgCluster, fault: str) -> tuple[Callable[[], None], Callable[[], None]]:
    if fault == "stopped":
        return cluster.stop, cluster.start
    return cluster.freeze, cluster.thaw


def _wait_ready(traffic: Traffic, healed_at: float, timeout: float = 60) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with traffic.lock:
            ready = [sent + took for sent, status, took in traffic.readiness if sent > healed_at and status == 200]
        if ready:
            return ready[0]
        time.sleep(0.1)
    raise AssertionError("/readyz never reported ready after the database came back")


def _wait_investigations(setup: Harness, timeout: float) -> Counter[int]:
    deadline = time.monotonic() + timeout
    while True:
        with setup.db.read() as session:
            rows = session.execute(
                select(Alert.investigation_status, func.count())
                .where(Alert.alert_type.is_not(None))
                .group_by(Alert.investigation_status)
            )
            statuses: Counter[int] = Counter({status: count for status, count in rows})
        if not any(statuses[status] for status in UNFINISHED) or time.monotonic() > deadline:
            return statuses
        time.sleep(0.5)


def _judge(
    fault: str,
    seconds: float,
    profile: Profile,
    traffic: Traffic,
    stored: dict[str, str],
    investigations: Counter[int],
    faulted_at: float,
    ready_after: float,
    *,
    long: bool,
) -> None:
    statuses = Counter(status for _, status, _, _ in traffic.requests)
    refused = [r for r in traffic.requests if r[1] == 503]
    slowest = max(duration for _, _, duration, _ in traffic.requests)
    not_ready = [sent + took for sent, status, took in traffic.readiness if sent >= faulted_at and status != 200]
    not_ready_after = (not_ready[0] - faulted_at) if not_ready else float("inf")
    slowest_probe = max(duration for _, _, duration in traffic.readiness)
    contents = Counter(stored.values())
    lost = {alert_id for alert_id, content in traffic.acknowledged.items() if stored.get(alert_id) != content}
    twice = sum(1 for count in contents.values() if count > 1)
    unfinished = sum(investigations[status] for status in UNFINISHED)
    held = (
        set(statuses) <= {200, 201, 503}
        and all(has_retry_after for *_, has_retry_after in refused)
        and slowest <= profile.bound + SLACK_SECONDS
        and not_ready_after <= READY_WITHIN_SECONDS
        and slowest_probe <= profile.readiness_timeout + SLACK_SECONDS
        and not lost
        and not twice
        and unfinished == 0
    )
    detail = (
        f"{len(traffic.requests):,} requests ({dict(sorted(statuses.items()))}), slowest {slowest:.2f} s "
        f"(bound {profile.bound:g} s); {len(traffic.acknowledged):,} alerts acknowledged ({traffic.replays} by a "
        f"replay of a late commit), {len(lost)} lost, "
        f"{twice} stored twice; /readyz answered false {not_ready_after:.1f} s after the fault, "
        f"ready {ready_after:.1f} s after recovery, slowest probe {slowest_probe:.2f} s; investigations "
        f"{investigations[InvestigationStatus.COMPLETED]} completed, {investigations[InvestigationStatus.FAILED]} "
        f"failed, {unfinished} unfinished"
    )
    record(
        f"PostgreSQL {fault} {seconds:g} s during intake and investigations",
        len(traffic.requests),
        "requests",
        held,
        detail,
        backend="postgresql",
        long=long,
    )
    assert set(statuses) <= {200, 201, 503}, detail
    assert all(has_retry_after for *_, has_retry_after in refused), "a 503 without Retry-After"
    assert slowest <= profile.bound + SLACK_SECONDS, detail
    assert not_ready_after <= READY_WITHIN_SECONDS, detail
    assert slowest_probe <= profile.readiness_timeout + SLACK_SECONDS, detail
    assert not lost, f"acknowledged but not stored: {sorted(lost)[:5]}"
    assert not twice, detail
    assert unfinished == 0, detail


@pytest.mark.slow
@pytest.mark.serial
def test_frozen_postgres_short(tmp_path: Path) -> None:
    """The fast suite's variant: one 4 s freeze, short bounds (2 s per request), a few dozen alerts."""
    run_fault("frozen", 4, SHORT, senders=2, pause=0.2, tmp_path=tmp_path, long=False)


@pytest.mark.slow
@pytest.mark.reliability_long
@pytest.mark.parametrize("fault", ["stopped", "frozen"])
def test_postgres_fault_with_default_bounds(fault: str, tmp_path: Path) -> None:
    run_fault(fault, 10, DEFAULTS, senders=4, pause=0.02, tmp_path=tmp_path, long=True)
