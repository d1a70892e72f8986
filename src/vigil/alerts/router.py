"""Alert intake (E1, batch) and queries. HTTP only: rules live in `alerts.service`."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Header, Query, Response

from vigil.alerts import service
from vigil.alerts.constants import MAX_IDEMPOTENCY_KEY_LENGTH, InvestigationStatus
from vigil.alerts.schemas import (
    INVESTIGATION_STATUS_DESCRIPTION,
    AlertBatchCreate,
    AlertBatchResult,
    AlertCreate,
    AlertDetail,
    AlertEventOut,
    AlertFilters,
    AlertOut,
    AlertPage,
    AlertTypeUpdate,
)
from vigil.errors import ValidationFailed
from vigil.input_types import EpochSeconds, Text
from vigil.investigations import flows
from vigil.metrics import ALERTS_INGESTED, INTAKE_REJECTED
from vigil.web.deps import DbDep, EngineDep, IntakeDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi/alerts", tags=["alerts"], responses=ERROR_RESPONSES)


@router.post(
    "",
    status_code=201,
    summary="Create an alert (E1)",
    responses={
        200: {"model": AlertOut, "description": "Idempotent replay of an earlier request"},
        409: ERROR_RESPONSES[400] | {"description": "Idempotency-Key reused with another body"},
    },
)
async def create_alert(
    payload: AlertCreate,
    response: Response,
    intake: IntakeDep,
    idempotency_key: Annotated[Text | None, Header(alias="Idempotency-Key")] = None,
) -> AlertOut:
    if idempotency_key is not None and not 1 <= len(idempotency_key) <= MAX_IDEMPOTENCY_KEY_LENGTH:
        raise ValidationFailed(
            f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters.",
            code="invalid_idempotency_key",
            details=[{"field": "Idempotency-Key"}],
        )
    stored = await asyncio.wrap_future(intake.writer.create(intake.principal, payload, idempotency_key))
    if stored.created:
        ALERTS_INGESTED.labels(stored.alert.alert_provider).inc()
        if intake.engine is not None and stored.alert.alert_type:
            intake.engine.wake()
    else:
        response.status_code = 200
    return stored.alert


@router.post("/batch", summary="Create up to 500 alerts; one result per item")
async def create_alerts_batch(payload: AlertBatchCreate, intake: IntakeDep) -> AlertBatchResult:
    results = await asyncio.wrap_future(intake.writer.create_batch(intake.principal, payload.alerts))
    if intake.engine is not None:
        intake.engine.wake()
    for item in results:
        if item.alert is not None:
            ALERTS_INGESTED.labels(item.alert.alert_provider).inc()
        elif item.error is not None:
            INTAKE_REJECTED.labels(item.error.code).inc()
    created = sum(1 for item in results if item.alert is not None)
    return AlertBatchResult(created=created, failed=len(results) - created, results=results)


@router.get("", summary="List alerts, newest first, with filters and cursor pagination")
def list_alerts(
    db: DbDep,
    principal: PrincipalDep,
    organization_code: Text | None = None,
    alert_provider: Text | None = None,
    alert_type: Text | None = None,
    investigation_status: Annotated[
        InvestigationStatus | None, Query(description=f"Only alerts in this state. {INVESTIGATION_STATUS_DESCRIPTION}")
    ] = None,
    created_after: Annotated[EpochSeconds | None, Query(description="Epoch seconds, inclusive")] = None,
    created_before: Annotated[EpochSeconds | None, Query(description="Epoch seconds, exclusive")] = None,
    q: Annotated[Text | None, Query(max_length=200, description="Substring of alert_content")] = None,
    cursor: Text | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> AlertPage:
    filters = AlertFilters(
        organization_code=organization_code,
        alert_provider=alert_provider,
        alert_type=alert_type,
        investigation_status=investigation_status,
        created_after=created_after,
        created_before=created_before,
        q=q,
    )
    with db.read() as session:
        alerts, next_cursor = service.list_alerts(session, principal, filters, cursor, limit)
        return AlertPage(alerts=[AlertOut.model_validate(a) for a in alerts], next_cursor=next_cursor)


@router.get("/{alert_ref}", summary="One alert by alert_id or alert_uuid, with its timeline")
def get_alert(alert_ref: Text, db: DbDep, principal: PrincipalDep) -> AlertDetail:
    with db.read() as session:
        alert = service.get_alert(session, principal, alert_ref)
        timeline = [AlertEventOut.model_validate(e) for e in service.alert_timeline(session, alert)]
        return AlertDetail(**AlertOut.model_validate(alert).model_dump(), timeline=timeline)


@router.patch(
    "/{alert_ref}",
    summary="Set the type of an alert that has none; it is submitted for investigation",
    responses={409: ERROR_RESPONSES[400] | {"description": "The alert already has a type"}},
)
def set_alert_type(
    alert_ref: Text, payload: AlertTypeUpdate, db: DbDep, principal: PrincipalDep, engine: EngineDep
) -> AlertOut:
    return AlertOut.model_validate(flows.set_alert_type(db, engine, principal, alert_ref, payload.alert_type))


@router.post("/{alert_ref}/retry", summary="Re-run a Failed investigation (retry count + 1)")
def retry_alert(alert_ref: Text, db: DbDep, principal: PrincipalDep, engine: EngineDep) -> AlertOut:
    return AlertOut.model_validate(flows.retry_investigation(db, engine, principal, alert_ref))
