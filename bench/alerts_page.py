"""Benchmark: the console's Alerts page with 100,000 alerts in PostgreSQL.

Creates a private database with Vigil's own migrations, bulk-loads alerts across several organizations,
providers, types and statuses with COPY, then signs in to the console in-process (the ASGI app behind
Starlette's TestClient) as an admin and as an analyst restricted to one organization, and times the
server's answer to GET /alerts (first page, filtered pages, a search, a deep page via cursor) from the
first ASGI event to the last body byte. The database is dropped at the end.

    .venv/bin/python -m bench.alerts_page [--alerts 100000] [--requests 30] [--explain]

Needs a PostgreSQL the current user can create databases in (VIGIL_BENCH_PG_URL, default
postgresql://postgres@127.0.0.1:5432/postgres, the test suite's cluster).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import re
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import psycopg
from fastapi.testclient import TestClient
from sqlalchemy import select, text

from bench import machine
from vigil.alerts.models import Alert
from vigil.app import create_app
from vigil.db.migrate import upgrade
from vigil.db.pagination import encode_cursor
from vigil.db.session import Database
from vigil.orgs import service as orgs_service
from vigil.playbooks.models import Playbook
from vigil.playbooks.service import playbook_name
from vigil.settings import Settings
from vigil.users import service as users_service
from vigil.users.schemas import Role

PG_ADMIN_URL = os.environ.get("VIGIL_BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
PASSWORD = "benchmark password 1"
#: Organization code → share of all alerts. The analyst's organization (BETA) holds a fifth of them;
#: TINY has a few hundred, the case an index on (organization_uuid, id) exists for.
ORGANIZATIONS = {"ACME": 0.40, "BETA": 0.20, "GAMMA": 0.20, "DELTA": 0.148, "OMEGA": 0.05, "TINY": 0.002}
PROVIDERS = ("microsoft_defender", "cloudflare", "okta", "push_security", "aws")
TYPES = (
    "Impossible travel sign-in",
    "Malware detected on endpoint",
    "WAF rule disabled",
    "Suspicious inbox rule",
    "MFA fatigue",
    "Ransomware behavior detected",
)
#: Investigation status → share; the Completed majority is what a running SOC's table looks like.
STATUSES = {15: 0.88, 20: 0.05, 0: 0.04, 5: 0.01, 10: 0.02}
ANALYST_ORG = "BETA"
Asgi = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Any]


class ServerTimer:
    """ASGI wrapper: time from the request's arrival to the last body chunk leaving the app."""

    def __init__(self, app: Asgi) -> None:
        self.app = app
        self.last_ms = 0.0

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        started = time.perf_counter()

        async def timed_send(message: Any) -> None:
            await send(message)
            if message.get("type") == "http.response.body" and not message.get("more_body", False):
                self.last_ms = (time.perf_counter() - started) * 1000

        await self.app(scope, receive, timed_send)


@dataclass(frozen=True)
class Scenario:
    name: str
    path: str


def admin_url(database: str) -> str:
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + database


def pg_admin(sql: str) -> None:
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as connection:
        connection.execute(sql.encode())


def pg_admin_in(url: str, sql: str) -> None:
    with psycopg.connect(url, autocommit=True, connect_timeout=5) as connection:
        connection.execute(sql.encode())


def weighted(rng: random.Random, shares: dict[Any, float], count: int) -> list[Any]:
    return rng.choices(list(shares), weights=list(shares.values()), k=count)


def seed(db: Database, url: str, total: int, rng: random.Random) -> dict[str, uuid.UUID]:
    """Organizations, playbooks and users through the services; the alerts themselves by COPY."""
    organizations = seed_fixtures(db)
    copy_alerts(url, organizations, total, rng)
    return organizations


def seed_fixtures(db: Database) -> dict[str, uuid.UUID]:
    """The organizations (an existing one is reused), their playbooks, an admin and an analyst of BETA."""
    now = int(time.time())
    with db.write() as session:
        organizations = {}
        for code in ORGANIZATIONS:
            existing = orgs_service.get_organization_by_code(session, code)
            organization = existing or orgs_service.create_organization(session, code, f"{code.title()} Corp")
            organizations[code] = organization.organization_uuid
        today = datetime.now(UTC)
        for code, organization_uuid in organizations.items():
            for provider in PROVIDERS:
                for kind in TYPES:
                    session.add(
                        Playbook(
                            playbook_uuid=uuid.uuid4(),
                            organization_uuid=organization_uuid,
                            organization_code=code,
                            alert_provider=provider,
                            alert_type=kind,
                            name=playbook_name(code, provider, kind, today),
                            current_version=1,
                            created_at=now,
                            modified_at=now,
                        )
                    )
        users_service.create_user(session, email="admin@bench.test", password=PASSWORD, role=Role.ADMIN)
        users_service.create_user(
            session, email="analyst@bench.test", password=PASSWORD, role=Role.ANALYST, organization_codes=[ANALYST_ORG]
        )
    return organizations


def copy_alerts(url: str, organizations: dict[str, uuid.UUID], total: int, rng: random.Random) -> None:
    """COPY `total` more alerts, numbered after those already stored (counters read first, written back)."""
    now = int(time.time())
    codes = {organization_uuid: code for code, organization_uuid in organizations.items()}
    with psycopg.connect(url) as connection:
        stored = connection.execute("SELECT organization_uuid, alert_provider, last_value FROM alert_counters")
        counters = {(codes[o], p): int(v) for o, p, v in stored.fetchall() if o in codes}
        first_case = connection.execute(
            "SELECT organization_code, count(case_id) FROM alerts GROUP BY organization_code"
        ).fetchall()
    cases: dict[str, int] = {code: int(n) for code, n in first_case}
    orgs = weighted(rng, ORGANIZATIONS, total)
    statuses = weighted(rng, STATUSES, total)
    creator = str(uuid.uuid4())
    organization_uuids = {code: str(organization_uuid) for code, organization_uuid in organizations.items()}
    today = datetime.now(UTC)
    investigators: dict[tuple[str, str, str], str] = {}
    start = now - 30 * 86_400
    buffer = io.StringIO()
    for n in range(total):
        code, status = orgs[n], statuses[n]
        provider = PROVIDERS[n % len(PROVIDERS)] if n % 7 else rng.choice(PROVIDERS)
        alert_type: str | None = rng.choice(TYPES) if status != 0 else None
        counters[(code, provider)] = counters.get((code, provider), 0) + 1
        created = start + n * (30 * 86_400) // total
        content = json.dumps(  # COPY's text format: a backslash is the one character JSON may hold that needs escaping
            {
                "title": alert_type or "Unclassified event",
                "userPrincipalName": f"user{rng.randrange(5000)}@{code.lower()}.example",
                "ipAddress": f"203.0.{rng.randrange(256)}.{rng.randrange(256)}",
                "deviceName": f"wks-{rng.randrange(10_000):05d}",
                "sha256": f"{rng.getrandbits(256):064x}",
                "severity": rng.choice(["low", "medium", "high"]),
                "raw": "x" * rng.randrange(50, 400),
            }
        ).replace("\\", "\\\\")
        case_id = investigator = completed = failure = None
        if status == 15:
            cases[code] = cases.get(code, 0) + 1
            case_id = f"{code}-{cases[code]}"
            completed = created + rng.randrange(5, 300)
        if status in (10, 15, 20) and alert_type:
            key = (code, provider, alert_type)
            if key not in investigators:
                investigators[key] = playbook_name(code, provider, alert_type, today)
            investigator = investigators[key]
        if status == 20:
            failure = "Step 'Machine details' failed: Defender API GET /api/machines failed (Forbidden: Missing role)"
        row = [
            f"{rng.getrandbits(128):032x}",  # PostgreSQL reads 32 hex digits as a uuid; no urandom per row
            f"{code}-{provider.upper()}-{counters[(code, provider)]}",
            organization_uuids[code],
            code,
            provider,
            alert_type,
            content,
            str(created),
            str(created),
            creator,
            str(completed or created),
            str(status),
            "1" if status == 20 else "0",
            case_id,
            investigator,
            str(completed) if completed else None,
            failure,
        ]
        buffer.write("\t".join(r"\N" if v is None else v for v in row) + "\n")
    buffer.seek(0)
    columns = (
        "alert_uuid, alert_id, organization_uuid, organization_code, alert_provider, alert_type, alert_content, "
        "created_at, created_at_source, created_by, modified_at, investigation_status, investigation_retry_count, "
        "case_id, investigator, completed_at, failure_reason"
    )
    with psycopg.connect(url) as connection:
        with connection.cursor().copy(f"COPY alerts ({columns}) FROM STDIN") as copy:
            while chunk := buffer.read(1 << 20):
                copy.write(chunk)
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO alert_counters (organization_uuid, alert_provider, last_value) VALUES (%s, %s, %s) "
                "ON CONFLICT (organization_uuid, alert_provider) DO UPDATE SET last_value = EXCLUDED.last_value",
                [(organizations[code], provider, value) for (code, provider), value in counters.items()],
            )
        connection.execute("ANALYZE alerts")


def signed_in_client(app: Asgi, email: str) -> TestClient:
    client = TestClient(app, base_url="http://bench.local")
    login = client.get("/login")
    match = re.search(r'name="csrf_token" value="([^"]+)"', login.text)
    assert match, "sign-in page has no CSRF field"
    answer = client.post(
        "/login", data={"email": email, "password": PASSWORD, "csrf_token": match.group(1)}, follow_redirects=False
    )
    assert answer.status_code == 303, answer.text
    return client


def measure(client: TestClient, timer: ServerTimer, path: str, requests: int) -> tuple[list[float], int]:
    rows = 0
    for _ in range(3):  # warm caches and connection pool
        client.get(path)
    samples = []
    for _ in range(requests):
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        samples.append(timer.last_ms)
        rows = response.text.count('<tr id="alert-')
    return samples, rows


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def explain(url: str, organizations: dict[str, uuid.UUID], middle_id: int) -> None:
    """EXPLAIN ANALYZE of the page's main queries as the service builds them."""
    analyst = organizations[ANALYST_ORG]
    queries = {
        "admin first page": select(Alert).order_by(Alert.id.desc()).limit(51),
        "analyst first page": select(Alert)
        .where(Alert.organization_uuid.in_([analyst]))
        .order_by(Alert.id.desc())
        .limit(51),
        "analyst deep page": select(Alert)
        .where(Alert.organization_uuid.in_([analyst]), Alert.id < middle_id)
        .order_by(Alert.id.desc())
        .limit(51),
        "admin organization filter TINY": select(Alert)
        .where(Alert.organization_uuid == organizations["TINY"])
        .order_by(Alert.id.desc())
        .limit(51),
        "admin Failed + okta": select(Alert)
        .where(Alert.alert_provider == "okta", Alert.investigation_status == 20)
        .order_by(Alert.id.desc())
        .limit(51),
        "admin last 24 h": select(Alert)
        .where(Alert.created_at >= int(time.time()) - 86_400)
        .order_by(Alert.id.desc())
        .limit(51),
    }
    db = Database(Settings(database_url=url))
    try:
        with db.read() as session:
            for name, query in queries.items():
                compiled = query.compile(db.engine, compile_kwargs={"literal_binds": True})
                plan = session.execute(text(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) {compiled}")).scalars()
                print(f"\n-- {name}\n" + "\n".join(plan))
    finally:
        db.dispose()


def machine_facts(url: str) -> dict[str, str]:
    return {
        "nproc": str(os.cpu_count()),
        "cpu": machine.cpu_model(),
        "ram": machine.ram(),
        "postgresql": machine.postgres_version(url),
        "python": platform.python_version(),
        "load average (1 min) after the run": f"{os.getloadavg()[0]:.2f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--alerts", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of the main queries")
    parser.add_argument(
        "--without-org-index", action="store_true", help="drop ix_alerts_org_uuid_id (migration 0006) to compare"
    )
    args = parser.parse_args()

    rng = random.Random(20261121)
    name = f"vigil_bench_{uuid.uuid4().hex[:10]}"
    url = admin_url(name)
    pg_admin(f"CREATE DATABASE {name}")
    try:
        with TemporaryDirectory() as data_dir:
            settings = Settings(database_url=url, data_dir=Path(data_dir))
            db = Database(settings)
            upgrade(db.engine)
            if args.without_org_index:
                pg_admin_in(url, "DROP INDEX ix_alerts_org_uuid_id")
            started = time.perf_counter()
            organizations = seed(db, url, args.alerts, rng)
            print(f"loaded {args.alerts:,} alerts in {time.perf_counter() - started:.1f} s")
            with db.read() as session:
                ids = sorted(session.scalars(select(Alert.id).where(Alert.organization_code == ANALYST_ORG)))
                everything = session.scalar(select(Alert.id).order_by(Alert.id.desc()).limit(1)) or 0
            middle = ids[len(ids) // 2]
            if args.explain:
                explain(url, organizations, middle)
            timer = ServerTimer(create_app(settings, db))
            scenarios = [
                Scenario("first page", "/alerts"),
                Scenario("filtered: status Failed + provider okta", "/alerts?status=20&provider=okta"),
                Scenario("filtered: organization TINY (0.2% of alerts)", "/alerts?org=TINY"),
                Scenario("filtered: last 24 hours", "/alerts?range=24h"),
                Scenario("search: content contains 'wks-00042'", "/alerts?q=wks-00042"),
                Scenario("deep page (cursor halfway)", f"/alerts?cursor={encode_cursor(middle)}"),
                Scenario("deep page, 200 rows", f"/alerts?limit=200&cursor={encode_cursor(everything // 2)}"),
            ]
            results: list[tuple[str, str, int, float, float, float]] = []
            for role, email in (("admin", "admin@bench.test"), (f"analyst ({ANALYST_ORG})", "analyst@bench.test")):
                with signed_in_client(timer, email) as client:
                    for scenario in scenarios:
                        if "TINY" in scenario.path and role != "admin":
                            continue
                        samples, rows = measure(client, timer, scenario.path, args.requests)
                        results.append(
                            (
                                role,
                                scenario.name,
                                rows,
                                statistics.median(samples),
                                percentile(samples, 0.95),
                                max(samples),
                            )
                        )
            db.dispose()
        facts = machine_facts(url)
    finally:
        pg_admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    print("\n" + ", ".join(f"{k}: {v}" for k, v in facts.items()))
    print(f"{args.alerts:,} alerts, {args.requests} timed requests per row (after 3 warm-up requests)\n")
    print("| user | page | rows | p50 ms | p95 ms | max ms |")
    print("|---|---|---:|---:|---:|---:|")
    for role, scenario_name, rows, p50, p95, worst in results:
        print(f"| {role} | {scenario_name} | {rows} | {p50:.1f} | {p95:.1f} | {worst:.1f} |")


if __name__ == "__main__":
    main()
