"""Liveness, readiness and Prometheus metrics endpoints (unauthenticated, for orchestrators)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from vigil.investigations.service import ai_usage
from vigil.metrics import ai_usage_exposition
from vigil.web.deps import DbDep

router = APIRouter(tags=["operations"])


@router.get("/healthz", summary="Liveness: the process answers")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="Readiness: the database answers (503 otherwise)")
def readyz(db: DbDep) -> dict[str, str]:
    db.ping()
    return {"status": "ready"}


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics(db: DbDep) -> Response:
    with db.read() as session:
        usage, investigations = ai_usage(session)
    return Response(generate_latest() + ai_usage_exposition(usage, investigations), media_type=CONTENT_TYPE_LATEST)
