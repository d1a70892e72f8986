"""Integration catalog and connection management under /serviceapi. HTTP only: rules live in the service."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response

from vigil.input_types import Text
from vigil.integrations import service
from vigil.integrations.catalog import catalog_json
from vigil.integrations.framework import Endpoints
from vigil.integrations.http import OutboundClient
from vigil.integrations.schemas import (
    ConnectionCreate,
    ConnectionList,
    ConnectionOut,
    ConnectionTestOut,
    ConnectionUpdate,
    IntegrationCatalog,
)
from vigil.integrations.secrets import SecretBox
from vigil.web.deps import DbDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi", tags=["integrations"], responses=ERROR_RESPONSES)


def _secret_box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


def _endpoints(request: Request) -> Endpoints:
    endpoints: Endpoints = request.app.state.endpoints
    return endpoints


def _outbound(request: Request) -> OutboundClient:
    client: OutboundClient = request.app.state.outbound
    return client


BoxDep = Annotated[SecretBox, Depends(_secret_box)]
EndpointsDep = Annotated[Endpoints, Depends(_endpoints)]
OutboundDep = Annotated[OutboundClient, Depends(_outbound)]
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: ERROR_RESPONSES[422] | {"description": "No such connection"}}
CONFLICT: dict[int | str, dict[str, Any]] = {
    409: ERROR_RESPONSES[422] | {"description": "Name already used in this organization"}
}


@router.get("/integrations", summary="Integrations with their connection fields and skills (input/output schemas)")
def list_integrations(_principal: PrincipalDep) -> IntegrationCatalog:
    return IntegrationCatalog(integrations=catalog_json())


@router.get("/connections", summary="List connections (secret values masked)")
def list_connections(
    db: DbDep,
    box: BoxDep,
    principal: PrincipalDep,
    organization_code: Annotated[Text | None, Query(description="Only this organization.")] = None,
    integration_id: Annotated[Text | None, Query(description="Only this integration.")] = None,
) -> ConnectionList:
    with db.read() as session:
        rows = service.list_connections(session, principal, organization_code, integration_id)
        return ConnectionList(connections=[service.describe(c, code, box) for c, code in rows])


@router.post("/connections", status_code=201, summary="Create a connection", responses=CONFLICT)
def create_connection(
    payload: ConnectionCreate, db: DbDep, box: BoxDep, http: OutboundDep, principal: PrincipalDep
) -> ConnectionOut:
    with db.write() as session:
        connection = service.create_connection(session, principal, payload, box, policy=http.policy)
        return service.describe(connection, payload.organization_code.strip().upper(), box)


@router.get("/connections/{connection_uuid}", summary="One connection", responses=NOT_FOUND)
def get_connection(connection_uuid: uuid.UUID, db: DbDep, box: BoxDep, principal: PrincipalDep) -> ConnectionOut:
    with db.read() as session:
        connection, code = service.get_connection(session, principal, connection_uuid)
        return service.describe(connection, code, box)


@router.patch(
    "/connections/{connection_uuid}",
    summary="Update a connection; omitted secrets are kept",
    responses=NOT_FOUND | CONFLICT,
)
def update_connection(
    connection_uuid: uuid.UUID,
    payload: ConnectionUpdate,
    db: DbDep,
    box: BoxDep,
    http: OutboundDep,
    principal: PrincipalDep,
) -> ConnectionOut:
    with db.write() as session:
        connection, code = service.update_connection(
            session, principal, connection_uuid, payload, box, policy=http.policy
        )
        return service.describe(connection, code, box)


@router.delete("/connections/{connection_uuid}", status_code=204, summary="Delete a connection", responses=NOT_FOUND)
def delete_connection(connection_uuid: uuid.UUID, db: DbDep, principal: PrincipalDep) -> Response:
    with db.write() as session:
        service.delete_connection(session, principal, connection_uuid)
    return Response(status_code=204)


@router.post(
    "/connections/{connection_uuid}/test",
    summary="Authenticate/Test against the vendor; stores and returns ok or cause + remedy",
    responses=NOT_FOUND,
)
async def authenticate_connection(
    connection_uuid: uuid.UUID,
    db: DbDep,
    box: BoxDep,
    endpoints: EndpointsDep,
    http: OutboundDep,
    principal: PrincipalDep,
) -> ConnectionTestOut:
    return await service.run_connection_test(db, principal, connection_uuid, box=box, endpoints=endpoints, http=http)


@router.post(
    "/connections/{connection_uuid}/webhook-token",
    summary="Issue a new token for the connection's inbound chat URLs (the old one stops working)",
    responses=NOT_FOUND,
)
def rotate_webhook_token(connection_uuid: uuid.UUID, db: DbDep, box: BoxDep, principal: PrincipalDep) -> ConnectionOut:
    with db.write() as session:
        connection, code = service.rotate_webhook_token(session, principal, connection_uuid)
        return service.describe(connection, code, box)
