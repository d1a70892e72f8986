"""Engine and session handling for SQLite (embedded default) and PostgreSQL (scale-out)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, exc, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from vigil.db import postgres
from vigil.db.breaker import Breaker
from vigil.db.readiness import ReadinessProbe
from vigil.errors import DatabaseUnavailable
from vigil.settings import Settings

# Errors that mean "the database cannot serve us right now" rather than "this request is wrong".
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    exc.OperationalError,
    exc.InterfaceError,
    exc.TimeoutError,
)


def _configure_sqlite(engine: Engine, busy_timeout_ms: int) -> None:
    """WAL + busy timeout so intake and workers share the file; writers take the lock up front.

    A deferred SQLite transaction that reads and then writes fails at once with SQLITE_BUSY when
    another writer got in between; `BEGIN IMMEDIATE` on write sessions makes it wait instead.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        mode = connection.get_execution_options().get("vigil_begin", "")
        connection.exec_driver_sql(f"BEGIN {mode}".strip())


def create_db_engine(settings: Settings, breaker: Breaker | None = None) -> Engine:
    """An engine whose waits are all bounded (docs/intake.md, "Timeouts and a sick database"); on PostgreSQL a
    connect failure or a missing answer trips `breaker`, and any answer recovers it."""
    url = make_url(settings.resolved_database_url)
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:":
            Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url, connect_args={"timeout": settings.sqlite_busy_timeout_ms / 1000, "check_same_thread": False}
        )
        _configure_sqlite(engine, settings.sqlite_busy_timeout_ms)
        return engine
    engine = create_engine(
        url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_pool_size,
        pool_timeout=settings.db_connect_timeout_seconds,
        pool_pre_ping=True,
        connect_args=postgres.connect_args(settings, "vigil"),
    )
    postgres.bound_connections(engine, settings.db_request_timeout_seconds, breaker)
    return engine


class Database:
    """Owns the engine; hands out read sessions and write sessions that commit or roll back."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.breaker = Breaker()
        self.engine = create_db_engine(settings, self.breaker)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(self.engine.execution_options(vigil_begin="IMMEDIATE"), expire_on_commit=False)
        self._sqlite_writer = threading.RLock()  # reentrant: a write opened inside another on one thread
        self.readiness = ReadinessProbe(self.ping, settings.readiness_timeout_seconds)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def read(self) -> Iterator[Session]:
        self.breaker.admit()
        with _unavailable_as_typed_error(), self._read() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A transaction that commits when the block ends normally and rolls back otherwise."""
        self.breaker.admit()
        with self._writer_turn(), _unavailable_as_typed_error(), self._write() as session, session.begin():
            yield session

    @contextmanager
    def _writer_turn(self) -> Iterator[None]:
        """SQLite has one writer at a time: this process's writers queue on a lock, in order, instead of
        polling the file lock (its busy handler sleeps and retries, so under load a waiting writer can lose
        every race until it times out with "database is locked"). Another process still meets the file lock
        and its busy timeout. The wait is bounded: past the busy timeout the caller gets a 503 to retry."""
        if not self.is_sqlite:
            yield
            return
        if not self._sqlite_writer.acquire(timeout=self.settings.sqlite_busy_timeout_ms / 1000):
            raise DatabaseUnavailable("The database is busy with other writes; retry shortly.")
        try:
            yield
        finally:
            self._sqlite_writer.release()

    def ping(self) -> None:
        with self.read() as session:
            session.execute(text("SELECT 1"))

    def workflow_engine_kwargs(self) -> dict[str, Any] | None:
        """DBOS's system-database engine options: bounded connects and pool waits on PostgreSQL (None: DBOS's own)."""
        return None if self.is_sqlite else postgres.workflow_engine_kwargs(self.settings)

    def dispose(self) -> None:
        self.readiness.close()
        self.engine.dispose()


@contextmanager
def _unavailable_as_typed_error() -> Iterator[None]:
    try:
        yield
    except UNAVAILABLE_ERRORS as error:
        raise DatabaseUnavailable() from error
