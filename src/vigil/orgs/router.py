"""E2 (organizations this key may use), E3 (valid providers), and an organization's own AI model."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request

from vigil.ai import organization_model
from vigil.input_types import Text
from vigil.integrations.secrets import SecretBox
from vigil.orgs import service
from vigil.orgs.schemas import (
    OrganizationAiModelUpdate,
    OrganizationDetail,
    OrganizationList,
    OrganizationOut,
    ProviderList,
    ProviderOut,
)
from vigil.web.deps import DbDep, PrincipalDep, SettingsDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi", tags=["organizations"], responses=ERROR_RESPONSES)

NOT_FOUND: dict[int | str, dict[str, Any]] = {404: ERROR_RESPONSES[422] | {"description": "No such organization"}}


def _secret_box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


BoxDep = Annotated[SecretBox, Depends(_secret_box)]


@router.get("/organizations", summary="List organizations this API key may use (E2)")
def list_organizations(db: DbDep, principal: PrincipalDep) -> OrganizationList:
    with db.read() as session:
        organizations = service.list_organizations(session, principal)
        return OrganizationList(organizations=[OrganizationOut.model_validate(o) for o in organizations])


@router.get(
    "/organizations/{organization_code}",
    summary="One organization, with the AI model that investigates its alerts (never its key)",
    responses=NOT_FOUND,
)
def get_organization(
    organization_code: Text, db: DbDep, principal: PrincipalDep, settings: SettingsDep
) -> OrganizationDetail:
    with db.read() as session:
        return organization_model.organization_detail(session, principal, organization_code, settings)


@router.put(
    "/organizations/{organization_code}/ai-model",
    summary="Set or clear the organization's own AI model (keys for all organizations only)",
    responses=NOT_FOUND,
)
def set_ai_model(
    organization_code: Text,
    payload: OrganizationAiModelUpdate,
    db: DbDep,
    box: BoxDep,
    principal: PrincipalDep,
    settings: SettingsDep,
) -> OrganizationDetail:
    """Omitted or null `ai_api_key` keeps the stored key while the provider and base URL stay the same; `""`
    removes it; `ai_model: null` removes the organization's own model, base URL and key."""
    key = payload.ai_api_key.get_secret_value() if payload.ai_api_key is not None else None
    with db.write() as session:
        organization = organization_model.change_override(
            session,
            principal,
            organization_code,
            box,
            model=payload.ai_model,
            base_url=payload.ai_base_url,
            api_key=key,
        )
        return organization_model.describe(organization, settings)


@router.get("/providers", summary="List valid alert_provider values (E3)")
def list_providers(db: DbDep, _principal: PrincipalDep) -> ProviderList:
    with db.read() as session:
        return ProviderList(providers=[ProviderOut.model_validate(p) for p in service.list_providers(session)])
