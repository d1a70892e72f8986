"""Real server processes for the benchmarks: a fresh store per run, `vigil serve` (or the baseline) started and killed.

A store (a PostgreSQL database or a SQLite data directory) is set up once per backend with Vigil's own CLI
(`vigil org add`, `vigil apikey create`; every command migrates the schema first) and then cloned for every run
(milliseconds), so every run starts from the same empty state.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import psycopg
from typer.testing import CliRunner

from bench.alerts_page import admin_url, pg_admin
from vigil.cli import app as cli_app

REPO = Path(__file__).resolve().parent.parent
VIGIL = str(Path(sys.executable).with_name("vigil"))
ORGANIZATION = "ACME"
PROVIDER = "okta"
#: Far above anything the benchmark offers, so the per-key limiter (default 200/s, burst 400) never answers 429.
RATE_LIMIT = "1000000"


class Backend(StrEnum):
    POSTGRES = "PostgreSQL"
    SQLITE = "SQLite"


def ensure_postgres() -> None:
    """Start the test suite's local cluster if it is down (the same script `make test` uses)."""
    subprocess.run(["bash", str(REPO / "scripts" / "ensure-postgres.sh")], check=True)


@dataclass
class Store:
    """One private database: a PostgreSQL database or a SQLite data directory, dropped by `drop()`."""

    backend: Backend
    data_dir: Path
    pg_name: str | None = None

    @property
    def database_url(self) -> str | None:
        """What `VIGIL_DATABASE_URL` is set to (None: SQLite in the data directory)."""
        return f"postgresql+psycopg://{admin_url(self.pg_name).split('://', 1)[1]}" if self.pg_name else None

    @property
    def psycopg_url(self) -> str:
        assert self.pg_name, "a SQLite store has no PostgreSQL URL"
        return admin_url(self.pg_name)

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "vigil.db"

    def env(self) -> dict[str, str]:
        """Environment of every process that works on this store (CLI, `vigil serve`)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("VIGIL_")}
        env |= {
            "VIGIL_DATA_DIR": str(self.data_dir),
            "VIGIL_RATE_LIMIT_PER_SECOND": RATE_LIMIT,
            "VIGIL_RATE_LIMIT_BURST": RATE_LIMIT,
            "VIGIL_ADMIN_PASSWORD": "benchmark admin password",
            "PYTHONPATH": str(REPO),  # the baseline runs as `python -m bench.baseline` from the store's directory
        }
        if self.database_url:
            env["VIGIL_DATABASE_URL"] = self.database_url
        return env

    def count(self, rows: str = "alerts") -> int:
        """`SELECT count(*) FROM <rows>` (a table, or a table with a WHERE clause) on a separate connection."""
        if self.pg_name:
            with psycopg.connect(self.psycopg_url, autocommit=True) as connection:
                row = connection.execute(f"SELECT count(*) FROM {rows}".encode()).fetchone()
        else:
            with closing(sqlite3.connect(f"file:{self.sqlite_path}?mode=ro", uri=True, timeout=30)) as connection:
                row = connection.execute(f"SELECT count(*) FROM {rows}").fetchone()
        return int(row[0]) if row else 0

    def drop(self) -> None:
        if self.pg_name:
            pg_admin(f"DROP DATABASE IF EXISTS {self.pg_name} WITH (FORCE)")
        shutil.rmtree(self.data_dir, ignore_errors=True)


def empty_store(backend: Backend, template: str | None = None) -> Store:
    """A new private database, empty or (PostgreSQL) a copy of `template`."""
    data_dir = Path(tempfile.mkdtemp(prefix="vigil-bench-"))
    if backend is Backend.SQLITE:
        return Store(backend, data_dir)
    name = f"vigil_bench_{uuid.uuid4().hex[:10]}"
    pg_admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
    return Store(backend, data_dir, name)


@dataclass
class Template:
    """A store set up once with the CLI; `clone()` gives each run its own copy."""

    store: Store
    api_key: str

    def clone(self) -> Store:
        """PostgreSQL: CREATE DATABASE … TEMPLATE; both: a copy of the data directory (SQLite files, keys)."""
        copy = empty_store(self.store.backend, template=self.store.pg_name)
        shutil.copytree(self.store.data_dir, copy.data_dir, dirs_exist_ok=True)
        return copy


def vigil_cli(store: Store, *args: str) -> str:
    """Run one `vigil` command (the installed CLI's own Typer app) on the store and return its output.

    In this process rather than a new one: a `vigil` process spends seconds importing the app, which made the
    set-up the slowest part of a smoke run. The environment is the store's alone while the command runs.
    """
    env: dict[str, str | None] = {key: None for key in os.environ if key.startswith("VIGIL_")}
    env |= {key: value for key, value in store.env().items() if key.startswith("VIGIL_")}
    done = CliRunner().invoke(cli_app, list(args), env=env)
    if done.exit_code:
        raise RuntimeError(f"vigil {' '.join(args)} failed ({done.exit_code}): {done.output}") from done.exception
    return done.output


def make_template(backend: Backend) -> Template:
    """Schema, organization ACME, the okta provider and an API key, created the way an operator would.

    Every `vigil` command migrates first, so no separate `vigil db upgrade` is needed.
    """
    store = empty_store(backend)
    try:
        vigil_cli(store, "org", "add", ORGANIZATION)
        if f" {PROVIDER} " not in vigil_cli(store, "provider", "list"):
            vigil_cli(store, "provider", "add", PROVIDER)
        api_key = vigil_cli(store, "apikey", "create", "--name", "bench").strip().splitlines()[-1]
        if store.sqlite_path.exists():  # one file to copy: fold the WAL back in
            with closing(sqlite3.connect(store.sqlite_path)) as connection:
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except BaseException:
        store.drop()
        raise
    return Template(store, api_key)


#: Templates alive in this process: a section nested in another's `vigil_templates` reuses them.
TEMPLATES: dict[Backend, Template] = {}


@contextmanager
def vigil_templates(*backends: Backend) -> Iterator[dict[Backend, Template]]:
    """One template per backend; one already made by an enclosing call is reused, and each call drops only
    the ones it made."""
    made: list[Template] = []
    try:
        for backend in backends:
            if backend not in TEMPLATES:
                TEMPLATES[backend] = make_template(backend)
                made.append(TEMPLATES[backend])
        yield {backend: TEMPLATES[backend] for backend in backends}
    finally:
        for template in made:
            del TEMPLATES[template.store.backend]
            template.store.drop()


def free_port() -> int:
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Server:
    """A server process in its own process group, so stopping it also stops anything it spawned."""

    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_healthy(self, path: str = "/healthz", timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(self.base_url + path, timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"server not healthy after {timeout} s:\n{self.log.read_text()[-3000:]}")

    def rss_mb(self) -> float:
        """Resident memory of the process and all its descendants (VmRSS), in MB."""
        total_kib = 0
        for pid in descendants(self.process.pid):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
        return total_kib / 1024

    def stop(self) -> None:
        """SIGTERM to the group, SIGKILL after a few seconds: a run's leftovers never load the next one."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=3)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            except ProcessLookupError:
                pass


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc/<pid>/task/*/children)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                queue.extend(int(child) for child in (task / "children").read_text().split())
            except OSError:
                continue
    return found


@contextmanager
def running(command: list[str], env: Mapping[str, str], log_dir: Path, health: str = "/healthz") -> Iterator[Server]:
    """Start `command` (which must listen on the port given by `{port}`), wait for health, always stop it."""
    port = free_port()
    log = log_dir / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [part.format(port=port) for part in command],
            env=dict(env),
            cwd=log_dir,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(process, port, log)
    try:
        server.wait_healthy(health)
        yield server
    finally:
        server.stop()
