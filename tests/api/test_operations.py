"""Health, readiness, metrics, request ids, and behaviour when the database goes away."""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
from fastapi import FastAPI, HTTPException
from fastapi.testclient import TestClient

from tests.conftest import PG_ADMIN_URL
from tests.support.harness import Harness
from vigil.errors import VigilError
from vigil.web.errors import install_error_handlers


def test_health_ready_and_metrics(harness: Harness) -> None:
    assert harness.client.get("/healthz").json() == {"status": "ok"}
    assert harness.client.get("/readyz").json() == {"status": "ready"}
    harness.add_org("ACME")
    harness.post_alert(harness.add_key("ACME").api_key)
    metrics = harness.client.get("/metrics").text
    assert 'vigil_alerts_ingested_total{alert_provider="cloudflare"}' in metrics
    assert "vigil_http_request_duration_seconds_bucket" in metrics


def test_request_id_is_propagated_or_assigned(harness: Harness) -> None:
    assert harness.client.get("/healthz", headers={"X-Request-ID": "abc-123"}).headers["x-request-id"] == "abc-123"
    assert len(harness.client.get("/healthz").headers["x-request-id"]) == 32


def test_openapi_documents_intake(harness: Harness) -> None:
    spec = harness.client.get("/openapi.json").json()
    assert "/serviceapi/alerts" in spec["paths"]
    assert "/serviceapi/organizations" in spec["paths"]
    assert "/serviceapi/providers" in spec["paths"]


def _take_database_down(harness: Harness, backend: str, db_url: str) -> None:
    """Really make the database unreachable: block new PostgreSQL connections / remove the SQLite dir."""
    if backend == "postgresql":
        name = db_url.rsplit("/", 1)[1]
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")  # type: ignore[arg-type]
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
    else:
        path = Path(db_url.removeprefix("sqlite:///"))
        shutil.rmtree(path.parent)
    harness.db.engine.dispose()


def test_database_down_is_503_not_500_or_hang(harness: Harness, backend: str, db_url: str) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    assert harness.post_alert(key).status_code == 201
    _take_database_down(harness, backend, db_url)
    for response in (harness.post_alert(key), harness.client.get("/readyz")):
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "database_unavailable"
        assert response.headers["Retry-After"]
    assert harness.client.get("/healthz").status_code == 200
    metrics = harness.client.get("/metrics")  # process metrics still answer; the database's AI usage is left out
    assert metrics.status_code == 200 and 'vigil_alerts_ingested_total{alert_provider="cloudflare"}' in metrics.text


def test_every_503_carries_retry_after() -> None:
    """A 503 raised without Retry-After (an HTTPException, a typed error) gets one from the error layer."""

    class Draining(VigilError):
        status_code = 503
        code = "draining"

    app = FastAPI()
    install_error_handlers(app)

    @app.get("/http")
    def _http() -> None:
        raise HTTPException(503, "busy")

    @app.get("/typed")
    def _typed() -> None:
        raise Draining("Shutting down; retry shortly.")

    client = TestClient(app)
    for path in ("/http", "/typed"):
        response = client.get(path)
        assert response.status_code == 503
        assert int(response.headers["Retry-After"]) > 0
        assert set(response.json()["error"]) == {"code", "message", "details"}
