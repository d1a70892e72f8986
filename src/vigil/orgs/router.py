"""E2 (organizations this key may use) and E3 (valid providers)."""

from __future__ import annotations

from fastapi import APIRouter

from vigil.orgs import service
from vigil.orgs.schemas import OrganizationList, OrganizationOut, ProviderList, ProviderOut
from vigil.web.deps import DbDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi", tags=["organizations"], responses=ERROR_RESPONSES)


@router.get("/organizations", summary="List organizations this API key may use (E2)")
def list_organizations(db: DbDep, principal: PrincipalDep) -> OrganizationList:
    with db.read() as session:
        organizations = service.list_organizations(session, principal.organization_scope)
        return OrganizationList(organizations=[OrganizationOut.model_validate(o) for o in organizations])


@router.get("/providers", summary="List valid alert_provider values (E3)")
def list_providers(db: DbDep, _principal: PrincipalDep) -> ProviderList:
    with db.read() as session:
        return ProviderList(providers=[ProviderOut.model_validate(p) for p in service.list_providers(session)])
