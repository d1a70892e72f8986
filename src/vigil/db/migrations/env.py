"""Alembic environment: the connection comes from `vigil.db.migrate`, never from an ini file."""

from __future__ import annotations

from alembic import context

from vigil.schema import Base

config = context.config
connection = config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
