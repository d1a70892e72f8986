"""Every wait on the database is bounded: lock, statement and busy timeouts, and intake's own deadline.

Each test holds the database the way a sick or contended one would (a lock held by another connection, another
process inside a SQLite write, a statement that runs too long) and checks the request comes back as a 503 with
Retry-After within the configured bound, and that nothing half-stored is left behind.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import select, text

from tests.conftest import fresh_database_url
from tests.support.harness import Harness
from tests.support.pg_cluster import PgCluster
from vigil.alerts.models import Alert
from vigil.db.migrate import upgrade
from vigil.db.session import Database, create_db_engine
from vigil.errors import DatabaseUnavailable
from vigil.integrations.live_server import LiveServer
from vigil.settings import Settings

#: What a loaded 2-core test machine adds to a bound (HTTP, scheduling); the bounds themselves are below a second.
SLACK_SECONDS = 1.5


@pytest.fixture
def pg_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database_url("postgresql", request, tmp_path)


@pytest.fixture
def sqlite_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from fresh_database_url("sqlite", request, tmp_path)


def make_settings(db_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(
        database_url=db_url,
        data_dir=tmp_path / "data",
        rate_limit_per_second=10_000,
        rate_limit_burst=10_000,
        **overrides,
    )


def timed_post(harness: Harness, key: str, body: dict[str, Any], **headers: str) -> tuple[Any, float]:
    started = time.monotonic()
    response = harness.post_alert(key, body, **headers)
    return response, time.monotonic() - started


def test_postgres_sessions_carry_the_server_side_timeouts(pg_url: str, tmp_path: Path) -> None:
    db = Database(make_settings(pg_url, tmp_path, db_statement_timeout_ms=4_000, db_lock_timeout_ms=1_500))
    try:
        with db.read() as session:
            shown = [
                session.execute(text(f"SHOW {name}")).scalar()
                for name in ("statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout")
            ]
    finally:
        db.dispose()
    assert shown == ["4s", "1500ms", "1min"]


def test_row_lock_held_elsewhere_gives_503_within_the_lock_timeout(pg_url: str, tmp_path: Path) -> None:
    settings = make_settings(pg_url, tmp_path, db_lock_timeout_ms=500)
    with Harness(settings) as harness:
        harness.add_org("ACME")
        key = harness.add_key("ACME").api_key
        assert harness.post_alert(key).status_code == 201  # the counter row exists from here on
        with psycopg.connect(pg_url) as holder:
            holder.execute("SELECT * FROM alert_counters FOR UPDATE")  # held until the block ends (rolled back)
            refused, waited = timed_post(harness, key, harness.alert_body(alert_content="during the lock"))
        accepted = harness.post_alert(key, harness.alert_body(alert_content="after the lock"))
        with harness.db.read() as session:
            contents = list(session.scalars(select(Alert.alert_content).order_by(Alert.id)))
    assert refused.status_code == 503, refused.text
    assert refused.json()["error"]["code"] == "database_unavailable"
    assert refused.headers["Retry-After"]
    assert waited < 0.5 + SLACK_SECONDS, f"held {waited:.2f} s"
    assert accepted.status_code == 201
    assert accepted.json()["alert_id"] == "ACME-CLOUDFLARE-2", "the refused alert took no number"
    assert "during the lock" not in contents


def test_slow_statement_is_cancelled_by_the_server_and_the_connection_survives(pg_url: str, tmp_path: Path) -> None:
    db = Database(
        make_settings(
            pg_url, tmp_path, db_statement_timeout_ms=300, db_request_timeout_seconds=2, db_connect_timeout_seconds=2
        )
    )
    try:
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailable), db.read() as session:
            session.execute(text("SELECT pg_sleep(3)"))
        waited = time.monotonic() - started
        assert not db.breaker.is_down, "a live server that cancels a statement is not a sick database"
        db.ping()
    finally:
        db.dispose()
    assert waited < 0.3 + SLACK_SECONDS, f"held {waited:.2f} s"


def test_sqlite_write_lock_held_by_another_process_gives_503_within_the_busy_timeout(
    sqlite_url: str, tmp_path: Path
) -> None:
    settings = make_settings(sqlite_url, tmp_path, sqlite_busy_timeout_ms=500)
    with Harness(settings) as harness:
        harness.add_org("ACME")
        key = harness.add_key("ACME").api_key
        holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")  # what another process's write transaction holds
            refused, waited = timed_post(harness, key, harness.alert_body(alert_content="during the lock"))
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        accepted = harness.post_alert(key, harness.alert_body(alert_content="after the lock"))
    assert refused.status_code == 503, refused.text
    assert refused.headers["Retry-After"]
    assert waited < 0.5 + SLACK_SECONDS, f"held {waited:.2f} s"
    assert accepted.status_code == 201
    assert accepted.json()["alert_id"] == "ACME-CLOUDFLARE-1"


def test_intake_deadline_answers_503_and_never_stores_what_the_writer_had_not_taken(
    sqlite_url: str, tmp_path: Path
) -> None:
    """The writer is stuck behind another process's write lock (busy timeout 4 s, deadline 1 s): the alert it is
    writing may commit late (its retry with the same Idempotency-Key replays it), the one queued behind is dropped."""
    settings = make_settings(
        sqlite_url, tmp_path, sqlite_busy_timeout_ms=4_000, db_statement_timeout_ms=500, db_request_timeout_seconds=1
    )
    with Harness(settings) as harness:
        harness.add_org("ACME")
        key = harness.add_key("ACME").api_key
        headers = {"Authorization": f"Bearer {key}"}
        answers: dict[str, tuple[httpx.Response, float]] = {}

        def post(name: str, url: str) -> None:
            started = time.monotonic()
            response = httpx.post(
                f"{url}/serviceapi/alerts",
                json=harness.alert_body(alert_content=name),
                headers={**headers, "Idempotency-Key": name},
                timeout=30,
            )
            answers[name] = (response, time.monotonic() - started)

        holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
        with LiveServer(harness.app) as server:
            post("warm-up", server.url)  # the key is recognised from here on: E1 goes straight to the writer
            holder.execute("BEGIN IMMEDIATE")
            senders = [threading.Thread(target=post, args=(name, server.url)) for name in ("taken", "queued")]
            senders[0].start()
            time.sleep(0.3)  # the writer has taken "taken" and waits for the file lock
            senders[1].start()
            for sender in senders:
                sender.join(timeout=30)
            time.sleep(0.5)
            holder.execute("ROLLBACK")  # the writer gets the lock and commits "taken", late
            holder.close()
            time.sleep(1.0)
            retried = {
                name: httpx.post(
                    f"{server.url}/serviceapi/alerts",
                    json=harness.alert_body(alert_content=name),
                    headers={**headers, "Idempotency-Key": name},
                    timeout=30,
                )
                for name in ("taken", "queued")
            }
        with harness.db.read() as session:
            stored = list(session.scalars(select(Alert.alert_content).order_by(Alert.id)))
    for name in ("taken", "queued"):
        response, waited = answers[name]
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"]
        assert waited < 1 + SLACK_SECONDS, f"{name} held {waited:.2f} s"
    assert "may still be stored" in answers["taken"][0].json()["error"]["message"]
    assert "was not stored" in answers["queued"][0].json()["error"]["message"]
    assert retried["taken"].status_code == 200, "the late commit is replayed, not stored twice"
    assert retried["queued"].status_code == 201
    assert answers["warm-up"][0].status_code == 201
    assert sorted(stored) == ["queued", "taken", "warm-up"], "each stored exactly once"


@pytest.mark.serial  # timed against a 2 s bound on a private cluster
def test_frozen_postgres_fails_fast_and_readiness_probes_share_one_thread(tmp_path: Path) -> None:
    """SIGSTOP: the first caller waits out the answer deadline, later ones are refused at once; /readyz answers
    within its timeout from one thread however many probes arrive, and is ready again soon after the thaw."""
    with PgCluster() as cluster:
        settings = make_settings(
            cluster.create_database("vigil"),
            tmp_path,
            db_statement_timeout_ms=1_000,
            db_request_timeout_seconds=2,
            db_connect_timeout_seconds=2,
            readiness_timeout_seconds=1,
        )
        schema = create_db_engine(settings)
        upgrade(schema)
        schema.dispose()
        # one client for every probe: building one per thread (an SSL context each) would be most of what we time
        with Harness(settings) as harness, LiveServer(harness.app) as server, httpx.Client(base_url=server.url) as http:
            harness.db.ping()
            cluster.freeze()
            first = _timed(harness.db.ping)
            later = _timed(harness.db.ping)
            probes: list[tuple[int, float]] = []

            def probe() -> None:
                started = time.monotonic()
                status = http.get("/readyz", timeout=30).status_code
                probes.append((status, time.monotonic() - started))

            probers = [threading.Thread(target=probe) for _ in range(10)]
            for prober in probers:
                prober.start()
            for prober in probers:
                prober.join(timeout=30)
            readiness_threads = [t for t in threading.enumerate() if t.name.startswith("vigil-readiness")]
            cluster.thaw()
            thawed = time.monotonic()
            while http.get("/readyz", timeout=30).status_code != 200:
                assert time.monotonic() - thawed < 5, "not ready 5 s after the thaw"
                time.sleep(0.1)
            harness.db.ping()
    assert isinstance(first[0], DatabaseUnavailable) and isinstance(later[0], DatabaseUnavailable)
    assert first[1] < 2 + SLACK_SECONDS, f"first caller held {first[1]:.2f} s"
    assert later[1] < 0.1, f"a caller after the breaker tripped held {later[1]:.2f} s"
    assert [status for status, _ in probes] == [503] * 10
    assert max(took for _, took in probes) < 1 + SLACK_SECONDS
    assert len(readiness_threads) <= 1


def _timed(call: Callable[[], None]) -> tuple[Exception | None, float]:
    started = time.monotonic()
    try:
        call()
    except Exception as error:
        return error, time.monotonic() - started
    return None, time.monotonic() - started
