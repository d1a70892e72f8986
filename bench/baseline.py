"""The bare baseline E1 is compared with: the hardware's floor for "parse the JSON, make one durable insert".

A plain ASGI callable served by the same uvicorn as `vigil serve` (one process, same defaults), reading the
same database settings (`VIGIL_DATABASE_URL`, else SQLite in `VIGIL_DATA_DIR`). For every POST it reads the
body, parses it with `json.loads`, INSERTs one row into a table with the columns and indexes of Vigil's
`alerts` table and commits, then answers 201 with `{"alert_uuid": ...}`. No authentication, no validation,
no numbering, no idempotency, no timeline, no access log. PostgreSQL: psycopg 3's async API, a pool of 10
connections (Vigil's default pool size). SQLite: one sqlite3 connection, WAL, synchronous=NORMAL, like Vigil.

    .venv/bin/python -m bench.baseline --port 8001
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import uvicorn

POOL_SIZE = 10
COLUMNS = (
    "alert_uuid, alert_id, organization_uuid, organization_code, alert_provider, alert_type, alert_content, "
    "created_at, created_at_source, created_by, modified_at, investigation_status, investigation_retry_count"
)
#: Vigil's alerts table minus its foreign keys and the columns an investigation fills in later.
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS alerts (
        id {id} PRIMARY KEY, alert_uuid VARCHAR(36) UNIQUE NOT NULL, alert_id VARCHAR(120) UNIQUE NOT NULL,
        organization_uuid VARCHAR(36) NOT NULL, organization_code VARCHAR(16) NOT NULL,
        alert_provider VARCHAR(64) NOT NULL, alert_type VARCHAR(256), alert_content TEXT NOT NULL,
        created_at BIGINT NOT NULL, created_at_source BIGINT NOT NULL, created_by VARCHAR(36) NOT NULL,
        modified_at BIGINT NOT NULL, investigation_status INTEGER NOT NULL, investigation_retry_count INTEGER NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS ix_b_org_id ON alerts (organization_code, id)",
    "CREATE INDEX IF NOT EXISTS ix_b_org_uuid_id ON alerts (organization_uuid, id)",
    "CREATE INDEX IF NOT EXISTS ix_b_status_id ON alerts (investigation_status, id)",
    "CREATE INDEX IF NOT EXISTS ix_b_provider_id ON alerts (alert_provider, id)",
    "CREATE INDEX IF NOT EXISTS ix_b_type_id ON alerts (alert_type, id)",
    "CREATE INDEX IF NOT EXISTS ix_b_created_at ON alerts (created_at)",
)
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def row(body: bytes) -> tuple[Any, ...]:
    """The parsed alert as one row; every value comes from the body or the clock."""
    alert = json.loads(body)
    alert_uuid = str(uuid.uuid4())
    now = int(time.time())
    return (
        alert_uuid,
        alert_uuid,
        alert["organization_code"],
        alert["organization_code"],
        alert["alert_provider"],
        alert.get("alert_type"),
        alert["alert_content"],
        now,
        now,
        alert_uuid,
        now,
        0,
        0,
    )


class PostgresStore:
    """Ten async psycopg connections handed out through a queue."""

    def __init__(self, url: str) -> None:
        self.url = url.replace("postgresql+psycopg://", "postgresql://")
        self.pool: asyncio.Queue[psycopg.AsyncConnection[Any]] = asyncio.Queue()

    async def open(self) -> None:
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as connection:
            for statement in SCHEMA:
                await connection.execute(statement.format(id="BIGSERIAL").encode())
        for _ in range(POOL_SIZE):
            self.pool.put_nowait(await psycopg.AsyncConnection.connect(self.url))

    async def insert(self, values: tuple[Any, ...]) -> None:
        connection = await self.pool.get()
        try:
            await connection.execute(
                f"INSERT INTO alerts ({COLUMNS}) VALUES ({', '.join(['%s'] * len(values))})".encode(), values
            )
            await connection.commit()
        except BaseException:
            await connection.rollback()
            raise
        finally:
            self.pool.put_nowait(connection)

    async def close(self) -> None:
        while not self.pool.empty():
            await self.pool.get_nowait().close()


class SqliteStore:
    """One connection with Vigil's pragmas; inserts run on the event loop (the fastest way SQLite allows)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connection: sqlite3.Connection | None = None

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA busy_timeout = 10000")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        for statement in SCHEMA:
            connection.execute(statement.format(id="INTEGER"))
        self.connection = connection

    async def insert(self, values: tuple[Any, ...]) -> None:
        assert self.connection is not None
        self.connection.execute("BEGIN IMMEDIATE")
        try:
            self.connection.execute(f"INSERT INTO alerts ({COLUMNS}) VALUES ({', '.join(['?'] * len(values))})", values)
            self.connection.execute("COMMIT")
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise

    async def close(self) -> None:
        if self.connection is not None:
            with closing(self.connection):
                pass


def store_from_env() -> PostgresStore | SqliteStore:
    url = os.environ.get("VIGIL_DATABASE_URL")
    if url:
        return PostgresStore(url)
    return SqliteStore(Path(os.environ.get("VIGIL_DATA_DIR", "./vigil-data")) / "vigil.db")


async def respond(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Baseline:
    """The ASGI app: GET /healthz, and POST anywhere = one alert inserted."""

    def __init__(self) -> None:
        self.store = store_from_env()

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.lifespan(receive, send)
            return
        if scope["method"] != "POST":
            await respond(send, 200, b'{"status": "ok"}')
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        values = row(body)
        await self.store.insert(values)
        await respond(send, 201, b'{"alert_uuid": "%s"}' % values[0].encode())

    async def lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.store.open()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.store.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args()
    uvicorn.run(Baseline(), host=args.host, port=args.port, log_config=None, access_log=False)


if __name__ == "__main__":
    main()
