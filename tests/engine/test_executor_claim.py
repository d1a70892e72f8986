"""Executor identity per process start: a replacement never waits for its predecessor, and an ended process's row
is claimed at once where that is provable (this host, same pid namespace), after `dead_worker_seconds` elsewhere,
by exactly one claimer."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
from sqlalchemy import delete, select

from tests.support.harness import Harness
from vigil.db.base import epoch_now
from vigil.investigations.engine import build_engine
from vigil.investigations.executors import ExecutorRegistry, ProcessMark, _pid_started
from vigil.investigations.models import WorkerHeartbeat

DEAD_AFTER = 30.0


def registry(harness: Harness, name: str = "api") -> ExecutorRegistry:
    return ExecutorRegistry(harness.db, name, DEAD_AFTER)


def stamp(harness: Harness, mark: ProcessMark, *, age: int = 0, executor_id: str = "old:1") -> str:
    now = epoch_now()
    with harness.db.write() as session:
        session.add(
            WorkerHeartbeat(
                executor_id=executor_id,
                name="old",
                hostname=mark.hostname,
                host_key=mark.host_key,
                pid=mark.pid,
                pid_started=mark.pid_started,
                started_at=now - age,
                last_seen=now - age,
            )
        )
    return executor_id


def rows(harness: Harness) -> set[str]:
    with harness.db.read() as session:
        return set(session.scalars(select(WorkerHeartbeat.executor_id)))


@pytest.fixture
def live_child() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    child.kill()
    child.wait()


def mark_of(pid: int) -> ProcessMark:
    return replace(ProcessMark.current(), pid=pid, pid_started=_pid_started(pid))


def test_every_start_gets_its_own_executor_id_under_the_stable_name(harness: Harness) -> None:
    settings = harness.settings.model_copy(update={"executor_id": "api-1"})
    first, second = (build_engine(settings, harness.db, role="serve") for _ in range(2))
    assert first.executor_id != second.executor_id
    assert first.executor_id.startswith("api-1:") and second.executor_id.startswith("api-1:")
    first.registry.register()
    second.registry.register()  # a second process under the same name is not refused: its identity is its own
    assert rows(harness) == {first.executor_id, second.executor_id}


def test_an_ended_process_on_this_host_is_claimed_at_once(harness: Harness) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    mark = mark_of(child.pid)
    child.kill()
    child.wait()
    ended = stamp(harness, mark)
    assert registry(harness).claim_ended() == [ended]
    assert ended not in rows(harness)


def test_a_live_process_on_this_host_is_left_alone(harness: Harness, live_child: subprocess.Popen[bytes]) -> None:
    stamp(harness, mark_of(live_child.pid))
    assert registry(harness).claim_ended() == []


def test_a_reused_pid_is_not_mistaken_for_the_process_that_had_it(
    harness: Harness, live_child: subprocess.Popen[bytes]
) -> None:
    mark = mark_of(live_child.pid)
    assert mark.pid_started is not None, "needs /proc (Linux)"
    ended = stamp(harness, replace(mark, pid_started=mark.pid_started - 100))
    assert registry(harness).claim_ended() == [ended]


def test_a_process_whose_pid_we_now_hold_has_ended(harness: Harness) -> None:
    ended = stamp(harness, replace(ProcessMark.current(), pid_started=None))  # e.g. pid 1 of a restarted service
    assert registry(harness).claim_ended() == [ended]


HERE = ProcessMark.current()


@pytest.mark.parametrize(
    "gone_here",  # our own pid: on this host and in this pid namespace it would prove the process gone
    [replace(HERE, hostname="another-host"), replace(HERE, host_key="another-boot/pid:[4026531836]")],
    ids=["another host", "another pid namespace (a restarted container)"],
)
def test_elsewhere_a_row_is_claimed_only_once_stale(harness: Harness, gone_here: ProcessMark) -> None:
    stamp(harness, gone_here, age=int(DEAD_AFTER) - 5)
    assert registry(harness).claim_ended() == []
    stale = stamp(harness, gone_here, age=int(DEAD_AFTER) + 1, executor_id="old:2")
    assert registry(harness).claim_ended() == [stale]


def test_one_claimer_wins(harness: Harness) -> None:
    ended = stamp(harness, replace(HERE, hostname="another-host"), age=int(DEAD_AFTER) + 1)
    claimers = [registry(harness, f"api-{n}") for n in range(6)]
    start = threading.Barrier(len(claimers))
    won: list[list[str]] = [[] for _ in claimers]

    def claim(n: int) -> None:
        start.wait()
        won[n] = claimers[n].claim_ended()

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(len(claimers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [executor for claimed in won for executor in claimed] == [ended]


def test_a_process_judged_dead_learns_it_and_registers_again(harness: Harness) -> None:
    mine = registry(harness)
    mine.register()
    assert mine.stamp() is True
    with harness.db.write() as session:
        session.execute(delete(WorkerHeartbeat))  # claimed by another engine while we were silent
    assert mine.stamp() is False
    assert rows(harness) == {mine.executor_id}
