"""One executor id, one live process: a live holder refuses a second start; a dead one on this host does not
make a restart wait out the heartbeat timeout."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests.support.harness import Harness
from vigil.db.base import epoch_now
from vigil.errors import Conflict
from vigil.investigations.engine import build_engine
from vigil.investigations.models import WorkerHeartbeat


def stamp(harness: Harness, executor_id: str, hostname: str, pid: int) -> None:
    now = epoch_now()
    with harness.db.write() as session:
        session.add(WorkerHeartbeat(executor_id=executor_id, hostname=hostname, pid=pid, started_at=now, last_seen=now))


def claim(harness: Harness, executor_id: str) -> None:
    settings = harness.settings.model_copy(update={"executor_id": executor_id})
    build_engine(settings, harness.db, role="test")._claim_executor_id()


def test_a_live_holder_of_the_id_refuses_a_second_start(harness: Harness) -> None:
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stamp(harness, "worker-a", socket.gethostname(), holder.pid)
        with pytest.raises(Conflict) as refused:
            claim(harness, "worker-a")
        assert refused.value.code == "executor_id_in_use"
    finally:
        holder.kill()
        holder.wait()


def test_a_fresh_heartbeat_of_another_host_refuses_a_second_start(harness: Harness) -> None:
    stamp(harness, "worker-b", "another-host", 4242)
    with pytest.raises(Conflict):
        claim(harness, "worker-b")


def test_restart_after_this_hosts_holder_died_is_not_refused(harness: Harness) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stamp(harness, "worker-c", socket.gethostname(), dead.pid)
    claim(harness, "worker-c")
    with harness.db.read() as session:
        row = session.get(WorkerHeartbeat, "worker-c")
        assert row is not None and row.pid != dead.pid
