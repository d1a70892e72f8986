"""Shared fixtures: every storage test runs on SQLite and on PostgreSQL via the `db_url` fixture."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy import update

from tests.support.harness import Harness
from vigil.db.migrate import upgrade
from vigil.db.session import create_db_engine
from vigil.settings import Settings

# The loopback fakes (each vendor folder's fake.py, tests/fakes) stand in for the vendors' public hosts: exempt them
# from the outbound-URL policy for every Settings() this process builds and every `vigil` subprocess it starts
# (policy tests override).
os.environ.setdefault("VIGIL_OUTBOUND_ALLOWED_HOSTS", "127.0.0.1,localhost,::1")

PG_ADMIN_URL = os.environ.get("VIGIL_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
BACKENDS = [b.strip() for b in os.environ.get("VIGIL_TEST_BACKENDS", "sqlite,postgresql").split(",") if b.strip()]


def _pg_url(database: str) -> str:
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + database


def _pg_admin(sql: str) -> None:
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as connection:
        connection.execute(sql)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    engine = create_db_engine(Settings(database_url=f"sqlite:///{path}"))
    upgrade(engine)
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    return path


@pytest.fixture(scope="session")
def pg_template() -> Iterator[str]:
    name = f"vigil_tmpl_{uuid.uuid4().hex[:10]}"
    _pg_admin(f"CREATE DATABASE {name}")
    engine = create_db_engine(Settings(database_url=_pg_url(name)))
    upgrade(engine)
    engine.dispose()
    yield name
    _pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def fresh_database_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated, empty database of `backend`, private to one test."""
    if backend == "sqlite":
        path = tmp_path / "vigil.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    template = request.getfixturevalue("pg_template")
    name = f"vigil_t_{uuid.uuid4().hex[:12]}"
    _pg_admin(f"CREATE DATABASE {name} TEMPLATE {template}")
    try:
        yield _pg_url(name)
    finally:
        _pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    param: str = request.param
    return param


@pytest.fixture
def db_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database_url(backend, request, tmp_path)


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    return Settings(
        database_url=db_url,
        data_dir=tmp_path / "data",
        rate_limit_per_second=10_000,
        rate_limit_burst=10_000,
    )


@pytest.fixture
def harness(settings: Settings) -> Iterator[Harness]:
    with Harness(settings) as built:
        yield built


@pytest.fixture
def expire_key(harness: Harness) -> object:
    """Move a key's expiry into the past (keys cannot be created already expired)."""
    from vigil.auth.models import ApiKey

    def _expire(key_uuid: uuid.UUID) -> None:
        with harness.db.write() as session:
            session.execute(update(ApiKey).where(ApiKey.key_uuid == key_uuid).values(expires_at=1))

    return _expire
