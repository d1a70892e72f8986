"""Two `vigil worker` processes on PostgreSQL; one is killed with SIGKILL mid-investigation."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select, text

from tests.conftest import fresh_database_url
from tests.support.harness import Harness
from vigil.cases.models import Case
from vigil.investigations.models import InvestigationStep, WorkerHeartbeat
from vigil.settings import Settings

VIGIL = str(Path(sys.executable).with_name("vigil"))
ALERTS = 12


@pytest.fixture
def pg_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database_url("postgresql", request, tmp_path)


def start_worker(worker_id: str, db_url: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VIGIL_DATABASE_URL": db_url,
        "VIGIL_DATA_DIR": str(tmp_path / worker_id),
        "VIGIL_ENGINE_STEP_DELAY_SECONDS": "0.4",
        "VIGIL_QUEUE_POLL_SECONDS": "0.1",
        "VIGIL_WORKER_CONCURRENCY": "4",
        "VIGIL_HEARTBEAT_SECONDS": "0.5",
        "VIGIL_DEAD_WORKER_SECONDS": "3",
    }
    log = (tmp_path / f"{worker_id}.log").open("wb")
    return subprocess.Popen([VIGIL, "worker", "--id", worker_id], env=env, stdout=log, stderr=subprocess.STDOUT)


def pending_workflows(harness: Harness, executor_id: str) -> int:
    with harness.db.read() as session:
        count = session.execute(
            text("SELECT count(*) FROM dbos.workflow_status WHERE executor_id = :e AND status = 'PENDING'"),
            {"e": executor_id},
        ).scalar_one()
    return int(count)


def wait_until_workers_run(
    harness: Harness, names: set[str], processes: list[subprocess.Popen[bytes]]
) -> dict[str, str]:
    """Wait for a heartbeat under each name; returns name → the executor id of that process start."""
    deadline = time.monotonic() + 60
    while True:
        with harness.db.read() as session:
            alive = {
                name: executor
                for name, executor in session.execute(select(WorkerHeartbeat.name, WorkerHeartbeat.executor_id))
            }
        if names <= alive.keys():
            return {name: alive[name] for name in names}
        assert all(p.poll() is None for p in processes), "a worker exited during start-up"
        assert time.monotonic() < deadline, f"workers not up; heartbeats from {alive}"
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.serial
def test_killed_worker_work_is_taken_over_without_duplicates(pg_url: str, tmp_path: Path) -> None:
    settings = Settings(database_url=pg_url, data_dir=tmp_path / "api", rate_limit_burst=1000)
    workers = [start_worker(name, pg_url, tmp_path) for name in ("worker-a", "worker-b")]
    try:
        with Harness(settings) as api:
            executors = wait_until_workers_run(api, {"worker-a", "worker-b"}, workers)
            killed = executors["worker-a"]
            api.add_org("ACME")
            key = api.add_key("ACME").api_key
            for n in range(ALERTS):
                body = api.alert_body(
                    provider="okta",
                    alert_type="Suspicious sign-in",
                    alert_content=f'{{"user": "u{n}", "ip": "198.51.100.{n}"}}',
                )
                assert api.post_alert(key, body).status_code == 201
            deadline = time.monotonic() + 60
            while pending_workflows(api, killed) == 0:
                assert time.monotonic() < deadline, "worker-a never picked up work"
                time.sleep(0.05)
            workers[0].send_signal(signal.SIGKILL)
            workers[0].wait(10)
            killed_at = time.monotonic()
            interrupted = pending_workflows(api, killed)
            while pending_workflows(api, killed) and time.monotonic() - killed_at < 30:
                time.sleep(0.05)
            taken_over_after = time.monotonic() - killed_at
            alerts = api.wait_for(
                key, lambda a: len(a) == ALERTS and all(x["investigation_status"] == 15 for x in a), timeout=120
            )
            with api.db.read() as session:
                cases_per_alert = session.execute(select(Case.alert_uuid, func.count()).group_by(Case.alert_uuid)).all()
                step_rows = session.execute(
                    select(
                        InvestigationStep.alert_uuid,
                        InvestigationStep.attempt,
                        InvestigationStep.position,
                        func.count(),
                    ).group_by(InvestigationStep.alert_uuid, InvestigationStep.attempt, InvestigationStep.position)
                ).all()
            assert interrupted >= 1
            assert pending_workflows(api, killed) == 0, "the dead worker's workflows were taken over"
            # Same host: the ended process is provable at the next heartbeat, no wait for dead_worker_seconds (3).
            assert taken_over_after < 3, f"taken over after {taken_over_after:.1f} s"
            assert len(cases_per_alert) == ALERTS and all(count == 1 for _, count in cases_per_alert)
            assert step_rows and all(count == 1 for *_, count in step_rows)
            assert len({a["case_id"] for a in alerts}) == ALERTS
            assert all(a["investigation_retry_count"] == 0 for a in alerts)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                try:
                    worker.wait(20)
                except subprocess.TimeoutExpired:
                    worker.kill()
