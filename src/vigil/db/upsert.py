"""Dialect-aware atomic counter increment (SQLite and PostgreSQL both support ON CONFLICT … RETURNING)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def increment_counter(
    session: Session, table: Any, key: dict[str, Any], column: str = "last_value", by: int = 1
) -> int:
    """Insert the counter at ``by`` or add ``by``, returning the new value; the row lock makes numbering
    gap-free because the increment commits or rolls back with the rows it numbers."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    counter = getattr(table, column)
    statement = (
        insert(table)
        .values(**key, **{column: by})
        .on_conflict_do_update(index_elements=[getattr(table, name) for name in key], set_={column: counter + by})
        .returning(counter)
    )
    return int(session.execute(statement).scalar_one())
