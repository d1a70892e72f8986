"""A private PostgreSQL cluster on its own port, which a test may stop, restart, freeze (SIGSTOP) and thaw.

The shared server on 5432 serves every other test, so database faults get a cluster of their own. initdb refuses
to run as root, so as root the cluster belongs to the `postgres` OS user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

import psycopg

BIN = Path(os.environ.get("VIGIL_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
#: Durability is not under test here, and the 2-core test machine is shared: skip the fsyncs.
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"


def available() -> bool:
    return (BIN / "initdb").exists() and (os.geteuid() != 0 or shutil.which("runuser") is not None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PgCluster:
    def __init__(self) -> None:
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="vigil-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def __enter__(self) -> PgCluster:
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.thaw()
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url(), autocommit=True, connect_timeout=5) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 {SERVER_OPTIONS}"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")

    def stop(self) -> None:
        """A fast shutdown: sessions are ended, connections refused until `start`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def freeze(self) -> None:
        """SIGSTOP every server process: the kernel still accepts and acknowledges, nothing answers."""
        self._signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self._signal(signal.SIGCONT)

    def _signal(self, signum: signal.Signals) -> None:
        pid_file = self.data / "postmaster.pid"
        if not pid_file.exists():
            return
        postmaster = int(pid_file.read_text().split()[0])
        for pid in [postmaster, *_children(postmaster)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def _run(self, program: str, *args: str, check: bool = True) -> None:
        command = [str(BIN / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if check and result.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{program} failed: {result.stdout}{result.stderr}\n{log}")


def _children(parent: int) -> list[int]:
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name (field 2) is parenthesised and may hold spaces: the parent pid follows the last ")"
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            children.append(int(entry.name))
    return children


def wait_until_accepting(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(url, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
