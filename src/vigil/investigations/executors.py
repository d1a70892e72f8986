"""Which engine processes are alive: one heartbeat row per process start, and the proof that one has ended.

Every start gets its own DBOS executor id (`<name>:<random>`), so a replacement never waits for its predecessor's
claim and two processes can never resume one executor's workflows twice. The workflows a dead process left pending
are resumed by whoever claims its row first (a conditional delete: one claimer wins):
* at once by an engine on the same host (same hostname, kernel boot and pid namespace) that sees the recorded pid
  is no longer that process — a restart, or a sibling `vigil worker`;
* by any live engine once the row is older than `dead_worker_seconds` — another host, or a container restarted
  into a new pid namespace, where a pid proves nothing.
"""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import delete, select, update

from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.investigations.models import WorkerHeartbeat

PROC = Path("/proc")


@dataclass(frozen=True)
class ProcessMark:
    """Where a process runs and which process it is, as far as another process on the same host can check."""

    hostname: str
    host_key: str | None
    pid: int
    pid_started: int | None

    @classmethod
    def current(cls) -> ProcessMark:
        pid = os.getpid()
        return cls(socket.gethostname(), _host_key(), pid, _pid_started(pid))

    def same_host(self, row: WorkerHeartbeat) -> bool:
        return (row.hostname, row.host_key) == (self.hostname, self.host_key)


def _host_key() -> str | None:
    """Kernel boot id + pid namespace: a pid read from another boot or another container means nothing here."""
    try:
        boot = (PROC / "sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}/{os.readlink(PROC / 'self/ns/pid')}"
    except OSError:
        return None


def _pid_started(pid: int) -> int | None:
    """The process's start time (clock ticks since boot, field 22 of /proc/<pid>/stat); None if there is none."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # the command name (field 2) may hold spaces and ")"


def process_gone(row: WorkerHeartbeat, here: ProcessMark) -> bool:
    """Is the process of `row` provably not running? Only decidable on its own host; elsewhere: no."""
    if not here.same_host(row):
        return False
    if row.pid == here.pid:
        return True  # we hold its pid now, and the row is not ours
    if here.host_key is None:  # no /proc: signal 0 tells whether the pid exists
        try:
            os.kill(row.pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    started = _pid_started(row.pid)
    return started is None or (row.pid_started is not None and started != row.pid_started)


class ExecutorRegistry:
    """This process's heartbeat row, and the claiming of rows whose process has ended."""

    def __init__(self, db: Database, name: str, dead_after_seconds: float) -> None:
        self.db = db
        self.name = name
        self.executor_id = f"{name}:{secrets.token_hex(6)}"
        self.dead_after_seconds = dead_after_seconds
        self.here = ProcessMark.current()

    def register(self) -> None:
        now = epoch_now()
        with self.db.write() as session:
            session.add(
                WorkerHeartbeat(
                    executor_id=self.executor_id,
                    name=self.name,
                    hostname=self.here.hostname,
                    host_key=self.here.host_key,
                    pid=self.here.pid,
                    pid_started=self.here.pid_started,
                    started_at=now,
                    last_seen=now,
                )
            )

    def stamp(self) -> bool:
        """Prove this process alive. False if its row was gone: another engine judged it dead (it was silent for
        longer than `dead_worker_seconds`) and has resumed its workflows; the row is written again."""
        with self.db.write() as session:
            result = session.execute(
                update(WorkerHeartbeat)
                .where(WorkerHeartbeat.executor_id == self.executor_id)
                .values(last_seen=epoch_now())
            )
            if getattr(result, "rowcount", 0) == 1:
                return True
        self.register()
        return False

    def claim_ended(self) -> list[str]:
        """Claim every other executor whose process has ended (same host) or whose row is stale; one claimer wins
        each, by deleting the row it read. Returns the executor ids this process won."""
        stale_before = epoch_now() - self.dead_after_seconds
        with self.db.read() as session:
            rows = list(session.scalars(select(WorkerHeartbeat).where(WorkerHeartbeat.executor_id != self.executor_id)))
        ended = [row for row in rows if row.last_seen < stale_before or process_gone(row, self.here)]
        claimed = []
        for row in ended:
            with self.db.write() as session:
                result = session.execute(
                    delete(WorkerHeartbeat).where(
                        WorkerHeartbeat.executor_id == row.executor_id, WorkerHeartbeat.last_seen == row.last_seen
                    )
                )
            if getattr(result, "rowcount", 0) == 1:
                claimed.append(row.executor_id)
        return claimed
