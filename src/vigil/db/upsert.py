"""Dialect-aware upserts and the atomic counter (SQLite and PostgreSQL both support ON CONFLICT … RETURNING)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def dialect_insert(session: Session, table: Any) -> Any:
    """An INSERT that can take ON CONFLICT … DO UPDATE on the session's database (PostgreSQL and SQLite spell
    it alike; SQLAlchemy has one construct per dialect)."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    return insert(table)


def increment_counter(
    session: Session, table: Any, key: dict[str, Any], column: str = "last_value", by: int = 1
) -> int:
    """Insert the counter at ``by`` or add ``by``, returning the new value; the row lock makes numbering
    gap-free because the increment commits or rolls back with the rows it numbers."""
    counter = getattr(table, column)
    statement = (
        dialect_insert(session, table)
        .values(**key, **{column: by})
        .on_conflict_do_update(index_elements=[getattr(table, name) for name in key], set_={column: counter + by})
        .returning(counter)
    )
    return int(session.execute(statement).scalar_one())
