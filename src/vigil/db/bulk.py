"""Many plain rows into one table inside the caller's transaction, by each database's fastest path.

Intake writes hundreds of alerts per transaction. SQLAlchemy's executemany spends more CPU building and
binding each row's parameters than the database spends storing it, so rows go to the driver directly:
PostgreSQL gets ``COPY … FROM STDIN`` (psycopg streams the rows; the transaction is the session's), SQLite
the sqlite3 module's executemany. Values are stored as SQLAlchemy would store them: SQLite keeps a UUID
column as 32 hex characters.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table
from sqlalchemy.orm import Session


def insert_rows(session: Session, table: Table, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Insert ``rows`` (values in ``columns`` order) into ``table`` in the session's open transaction."""
    if not rows:
        return
    connection = session.connection()
    driver_connection: Any = connection.connection.driver_connection
    names = ", ".join(columns)
    if connection.dialect.name == "postgresql":
        with driver_connection.cursor() as cursor, cursor.copy(f"COPY {table.name} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        return
    placeholders = ", ".join("?" * len(columns))
    cursor = driver_connection.cursor()
    try:
        cursor.executemany(
            f"INSERT INTO {table.name} ({names}) VALUES ({placeholders})",  # noqa: S608 - names from our own tables
            [[value.hex if isinstance(value, uuid.UUID) else value for value in row] for row in rows],
        )
    finally:
        cursor.close()
