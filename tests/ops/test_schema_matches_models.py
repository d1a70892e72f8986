"""The migrations and the models describe one schema, and the migration history has one head."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from vigil.db.migrate import MIGRATIONS_DIR
from vigil.db.session import create_db_engine
from vigil.schema import Base
from vigil.settings import Settings


def test_migrated_database_matches_the_models(db_url: str) -> None:
    engine = create_db_engine(Settings(database_url=db_url))
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"render_as_batch": True})
            assert compare_metadata(context, Base.metadata) == []
    finally:
        engine.dispose()


def test_migration_history_has_a_single_head() -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    assert ScriptDirectory.from_config(config).get_heads() == ["0019"]
