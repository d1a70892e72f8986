"""Liveness, readiness and Prometheus metrics endpoints (unauthenticated, for orchestrators)."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy.exc import SQLAlchemyError

from vigil.errors import DatabaseUnavailable
from vigil.investigations.metrics import operations_snapshot
from vigil.investigations.service import ai_usage
from vigil.metrics import ai_usage_exposition, database_up_exposition, operations_exposition
from vigil.web.deps import DbDep

logger = logging.getLogger("vigil.web")
router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="Liveness: the process answers")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="Readiness: the database answers within the readiness timeout (503 otherwise)")
async def readyz(db: DbDep) -> dict[str, str]:
    """Answers within `readiness_timeout_seconds` whatever state the database is in (frozen included)."""
    if not await db.readiness.ready():
        raise DatabaseUnavailable(f"The database did not answer within {db.readiness.timeout:g} s.")
    return {"status": "ready"}


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(db: DbDep) -> Response:
    """Process metrics always; AI usage and the operations series (read from the database, so every worker
    counts) when the database answers: an outage must not also blind the monitoring that reports it, and
    `vigil_metrics_database_up` says which case a scrape is."""
    body = generate_latest()
    try:
        with db.read() as session:
            usage, investigations = ai_usage(session)
            snapshot = operations_snapshot(session)
        body += ai_usage_exposition(usage, investigations) + operations_exposition(snapshot)
        up = True
    except (DatabaseUnavailable, SQLAlchemyError):
        logger.warning("metrics: AI usage and operations series left out, the database did not answer")
        up = False
    return Response(body + database_up_exposition(up), media_type=CONTENT_TYPE_LATEST)
