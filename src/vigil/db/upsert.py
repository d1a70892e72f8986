"""Dialect-aware atomic counter increment (SQLite and PostgreSQL both support ON CONFLICT … RETURNING)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def increment_counter(session: Session, table: Any, key: dict[str, Any], column: str = "last_value") -> int:
    """Insert the counter at 1 or add 1, returning the new value; the row lock makes numbering gap-free
    because the increment commits or rolls back with the row it numbers."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    counter = getattr(table, column)
    statement = (
        insert(table)
        .values(**key, **{column: 1})
        .on_conflict_do_update(index_elements=[getattr(table, name) for name in key], set_={column: counter + 1})
        .returning(counter)
    )
    return int(session.execute(statement).scalar_one())
