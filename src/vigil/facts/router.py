"""Organization facts over the API: list, record, read, change and revoke what an organization vouches for."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy.orm import Session

from vigil.evidence.facts import FactKind
from vigil.facts import service
from vigil.facts.models import OrganizationFact
from vigil.facts.schemas import FactCreate, FactDetail, FactList, FactUpdate
from vigil.input_types import Text
from vigil.orgs.models import Organization
from vigil.web.deps import DbDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(
    prefix="/serviceapi/organizations/{organization_code}/facts", tags=["facts"], responses=ERROR_RESPONSES
)

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: ERROR_RESPONSES[422] | {"description": "No such fact in this organization"}
}
REVOKED: dict[int | str, dict[str, Any]] = {
    409: ERROR_RESPONSES[422] | {"description": "The fact was revoked (`fact_revoked`); record a new one"}
}


def _detail(session: Session, organization: Organization, fact: OrganizationFact) -> FactDetail:
    out = service.describe(fact, organization.organization_code)
    return FactDetail(**out.model_dump(), history=service.fact_history(session, fact))


@router.get(
    "",
    summary="List the organization's facts",
    description=(
        "Every fact with its `status`: `active` ones are what the analyst reads before each analysis, `expired` "
        "and `revoked` ones are kept for the record. `active=true` lists only the active ones, `active=false` only "
        "the others."
    ),
)
def list_facts(
    organization_code: Text,
    db: DbDep,
    principal: PrincipalDep,
    kind: FactKind | None = None,
    active: Annotated[
        bool | None, Query(description="true: only active facts; false: only expired or revoked.")
    ] = None,
) -> FactList:
    with db.read() as session:
        organization, facts = service.list_facts(session, principal, organization_code, kind=kind, active=active)
        return FactList(facts=[service.describe(f, organization.organization_code) for f in facts])


@router.post(
    "",
    status_code=201,
    summary="Record a fact (an authorised scanner, VPN egress, an approved tool, a change window, an account…)",
    description=(
        "The value is checked per kind: an IP address or CIDR range (at most a /8, or /32 for IPv6) for the network "
        "kinds, a non-empty tool name, change reference or account otherwise. `expires_at` is required, in the "
        "future and at most two years ahead: nothing is permanent. A `change_window` needs `window_start` and "
        "`window_end` (at most 31 days apart); other kinds have none. The creation is recorded with the key as actor."
    ),
)
def create_fact(organization_code: Text, payload: FactCreate, db: DbDep, principal: PrincipalDep) -> FactDetail:
    with db.write() as session:
        organization, fact = service.create_fact(session, principal, organization_code, payload, actor=principal.actor)
        return _detail(session, organization, fact)


@router.get("/{fact_uuid}", summary="One fact, with every change to it (who, when, from, to)", responses=NOT_FOUND)
def get_fact(organization_code: Text, fact_uuid: Text, db: DbDep, principal: PrincipalDep) -> FactDetail:
    with db.read() as session:
        organization, fact = service.get_fact(session, principal, organization_code, fact_uuid)
        return _detail(session, organization, fact)


@router.patch(
    "/{fact_uuid}",
    summary="Change a fact's reason, scope, owner, expiry or change window",
    description=(
        "Only the fields sent change, each one recorded with the key as actor; `scope: null` clears the scope. "
        "The kind and value never change (a different address is a different fact). `expires_at` renews the fact "
        "(at most two years ahead) or, in the past, ends it as of then."
    ),
    responses={**NOT_FOUND, **REVOKED},
)
def update_fact(
    organization_code: Text, fact_uuid: Text, changes: FactUpdate, db: DbDep, principal: PrincipalDep
) -> FactDetail:
    with db.write() as session:
        organization, fact = service.update_fact(
            session, principal, organization_code, fact_uuid, changes, actor=principal.actor
        )
        return _detail(session, organization, fact)


@router.delete(
    "/{fact_uuid}",
    summary="Revoke a fact: the analyst stops reading it at once; it stays listed as revoked",
    description="Revoking twice is a no-op that keeps the first revocation time, so a retry is safe.",
    responses=NOT_FOUND,
)
def revoke_fact(organization_code: Text, fact_uuid: Text, db: DbDep, principal: PrincipalDep) -> FactDetail:
    with db.write() as session:
        organization, fact = service.revoke_fact(
            session, principal, fact_uuid, actor=principal.actor, organization_code=organization_code
        )
        return _detail(session, organization, fact)
