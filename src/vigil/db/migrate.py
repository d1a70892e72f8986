"""Run Alembic migrations programmatically (on `vigil serve` start and `vigil db upgrade`)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine

from vigil.db.postgres import unbounded

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "heads") -> None:
    """Bring the schema to `revision`; safe to run from several processes (PostgreSQL advisory lock)."""
    config = alembic_config(engine)
    with engine.connect() as connection, unbounded(connection):  # a migration may take longer than a request
        if connection.dialect.name == "postgresql":
            connection.exec_driver_sql("SELECT pg_advisory_lock(7423001)")
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
            connection.commit()
        finally:
            if connection.dialect.name == "postgresql":
                connection.exec_driver_sql("SELECT pg_advisory_unlock(7423001)")
                connection.commit()


def revision_autogenerate(engine: Engine, message: str) -> None:
    """Developer helper: write a new migration from the difference between models and database."""
    config = alembic_config(engine)
    with engine.connect() as connection:
        config.attributes["connection"] = connection
        command.revision(config, message=message, autogenerate=True)
