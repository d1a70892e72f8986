"""PostgreSQL connections whose every wait is bounded, even when the server is frozen.

Server-side timeouts (statement, lock, idle in transaction) cover a live but slow or contended server. They do
nothing when the server process is stopped (SIGSTOP, a hung VM): the kernel still accepts and acknowledges the
bytes, so neither the server nor TCP keepalives ever give up. `BoundedConnection` therefore also bounds every wait
for an answer on the client, closes a connection whose answer does not come (its protocol state is unknown), and
tells the `Breaker` so other callers fail at once instead of each waiting out the same timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.abc import PQGen
from psycopg.connection import _WAIT_INTERVAL
from psycopg.errors import _WaitTimeout
from sqlalchemy import Connection, Engine, event
from sqlalchemy.engine import ExceptionContext

from vigil.db.breaker import Breaker
from vigil.settings import Settings

#: The server ends a session left idle inside a transaction this long (its locks, e.g. an alert counter row,
#: would otherwise stay held by a frozen or wedged client). Generous: nothing in Vigil idles in a transaction.
IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000
#: TCP keepalive on idle pooled connections: a vanished host is noticed after about 10 + 3 * 5 = 25 s.
KEEPALIVE = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}


class DatabaseNotAnswering(psycopg.OperationalError):
    """The server sent no answer within the client-side deadline; the connection was closed."""


class BoundedConnection(psycopg.Connection[Any]):
    """A psycopg connection that waits at most `answer_timeout` seconds for any one answer from the server.

    psycopg funnels every exchange (execute, fetch, COPY, commit, rollback, the pool's ping) through `wait`, so
    bounding it bounds them all; connecting is bounded by libpq's `connect_timeout`.
    """

    answer_timeout: float | None = None
    breaker: Breaker | None = None

    def wait(self, gen: PQGen[Any], interval: float = _WAIT_INTERVAL, timeout: float | None = None) -> Any:
        bound = self.answer_timeout
        if bound is None or (timeout is not None and timeout <= bound):
            return self._answered(super().wait(gen, interval, timeout))
        try:
            return self._answered(super().wait(gen, interval, bound))
        except _WaitTimeout:
            self.close()  # mid-exchange: the connection cannot be reused, and SQLAlchemy discards a closed one
            if self.breaker is not None:
                self.breaker.trip()
            raise DatabaseNotAnswering(f"the database sent no answer within {bound:g} s") from None

    def _answered(self, result: Any) -> Any:
        if self.breaker is not None and self.breaker.is_down:
            self.breaker.recover()
        return result


def connect_args(settings: Settings, application_name: str) -> dict[str, Any]:
    """libpq parameters: the server-side timeouts as session settings, plus connect and TCP bounds."""
    options = " ".join(
        (
            f"-c statement_timeout={settings.db_statement_timeout_ms}",
            f"-c lock_timeout={settings.db_lock_timeout_ms}",
            f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_TIMEOUT_MS}",
        )
    )
    return {
        "connect_timeout": settings.db_connect_timeout_seconds,
        "application_name": application_name,
        "options": options,
        # Unacknowledged data (a host or network gone, not a frozen process) fails the socket at the deadline.
        "tcp_user_timeout": int(settings.db_request_timeout_seconds * 1000),
        **KEEPALIVE,
    }


def workflow_engine_kwargs(settings: Settings) -> dict[str, Any]:
    """DBOS's system-database engine: the same connect, pool and TCP bounds, but no statement or lock timeout.

    DBOS pauses its work and retries while its database is away (by design, nothing a request waits on), and it
    does not retry a cancelled statement, so a session statement timeout would turn a slow moment into a failed
    workflow. DBOS sets its own idle-in-transaction timeout.
    """
    args = connect_args(settings, "vigil-workflows")
    del args["options"]
    return {"connect_args": args, "pool_timeout": settings.db_connect_timeout_seconds}


def bound_connections(engine: Engine, answer_timeout: float, breaker: Breaker | None) -> None:
    """Make `engine` open `BoundedConnection`s; a failed connect trips the breaker, a successful one recovers it."""

    @event.listens_for(engine, "do_connect")
    def _connect(_dialect: Any, _record: Any, cargs: Any, cparams: dict[str, Any]) -> BoundedConnection:
        try:
            connection = BoundedConnection.connect(*cargs, **cparams)
        except psycopg.OperationalError:
            if breaker is not None:
                breaker.trip()
            raise
        connection.answer_timeout = answer_timeout
        connection.breaker = breaker
        if breaker is not None and breaker.is_down:
            breaker.recover()
        return connection

    @event.listens_for(engine, "handle_error")
    def _no_reconnect_after_silence(context: ExceptionContext) -> None:
        """A pool ping the server left unanswered fails the checkout: reconnecting, as after a dropped
        connection, would only add a connect timeout to the caller's wait."""
        if context.is_pre_ping and isinstance(context.original_exception, DatabaseNotAnswering):
            context.is_disconnect = False


@contextmanager
def unbounded(connection: Connection) -> Iterator[None]:
    """Lift the statement and lock timeouts and the answer deadline on one connection, for schema migrations
    (a large index build, or waiting on another process's migration lock); the connection is discarded after, so
    no pooled connection keeps them lifted."""
    if connection.dialect.name != "postgresql":
        yield
        return
    driver = connection.connection.driver_connection
    if isinstance(driver, BoundedConnection):
        driver.answer_timeout = None
    connection.exec_driver_sql("SET statement_timeout = 0")
    connection.exec_driver_sql("SET lock_timeout = 0")
    try:
        yield
    finally:
        connection.invalidate()
