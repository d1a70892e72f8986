"""Administration: organizations, providers, API keys and service-wide settings (admins only)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from pydantic import BaseModel, SecretStr

from vigil.ai.organization_model import change_override, override_of
from vigil.alerts import service as alerts_service
from vigil.auth import service as auth_service
from vigil.console.deps import AdminDep
from vigil.console.forms import NO_STORE, OrganizationCodes, form_error, see_other
from vigil.console.rendering import render
from vigil.dashboard import service as dashboard_service
from vigil.durations import human_duration
from vigil.errors import NotFound, ValidationFailed, VigilError
from vigil.input_types import MAX_CHECKPOINT_TIMEOUT_SECONDS, MIN_CHECKPOINT_TIMEOUT_SECONDS
from vigil.integrations.secrets import SecretBox
from vigil.knowledge.bundle import bundles
from vigil.orgs import service as orgs_service
from vigil.orgs.schemas import MAX_AI_BASE_URL_LENGTH, MAX_AI_MODEL_LENGTH, MAX_NAME_LENGTH
from vigil.web.deps import DbDep

router = APIRouter()


def _key_uuid(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise NotFound(f"No API key {value}.", code="api_key_not_found") from None


# Organizations ---------------------------------------------------------------------------------------------------


class OrganizationForm(BaseModel):
    organization_code: str = ""
    name: str = ""


def _organizations_page(
    request: Request, db: DbDep, *, form: OrganizationForm | None = None, status_code: int = 200, **extra: Any
) -> Response:
    with db.read() as session:
        organizations = dashboard_service.organization_overview(session)
    context = {
        "organizations": organizations,
        "form": form or OrganizationForm(),
        "created": request.query_params.get("created"),
        "renamed": request.query_params.get("renamed"),
        "max_name_length": MAX_NAME_LENGTH,
        **extra,
    }
    return render(request, "admin/organizations.html", context, status_code=status_code)


@router.get("/organizations")
def organizations(request: Request, identity: AdminDep, db: DbDep) -> Response:
    return _organizations_page(request, db)


@router.post("/organizations")
def create_organization(
    request: Request, identity: AdminDep, db: DbDep, form: Annotated[OrganizationForm, Form()]
) -> Response:
    try:
        with db.write() as session:
            organization = orgs_service.create_organization(session, form.organization_code, form.name)
            code = organization.organization_code
    except VigilError as error:
        return _organizations_page(request, db, form=form, **form_error(error))
    return see_other(f"/organizations?created={code}")


class ModelForm(BaseModel):
    """An organization's own investigator model; the key is a secret, so it is never rendered back."""

    ai_model: str = ""
    ai_base_url: str = ""
    ai_api_key: SecretStr = SecretStr("")
    remove_ai_api_key: str = ""


def _organization_edit_page(
    request: Request,
    db: DbDep,
    code: str,
    *,
    name: str | None = None,
    timeout: str | None = None,
    model_form: ModelForm | None = None,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    with db.read() as session:
        organization = orgs_service.get_organization(session, code)
        own = organization.checkpoint_timeout_seconds
        inherited, source = orgs_service.default_checkpoint_timeout(session, db.settings.checkpoint_timeout_seconds)
        override = override_of(organization)
        context = {
            "organization": organization,
            "name": organization.name if name is None else name,
            "max_name_length": MAX_NAME_LENGTH,
            "timeout": ("" if own is None else str(own)) if timeout is None else timeout,
            "timeout_effective": human_duration(own if own is not None else inherited),
            "timeout_inherited": human_duration(inherited),
            "timeout_inherited_source": source,
            "timeout_own": own is not None,
            "timeout_saved": request.query_params.get("saved") == "timeout",
            "min_timeout": MIN_CHECKPOINT_TIMEOUT_SECONDS,
            "max_timeout": MAX_CHECKPOINT_TIMEOUT_SECONDS,
            # The key is never put in the page: only whether one is stored.
            "model_form": model_form or ModelForm(ai_model=override.model or "", ai_base_url=override.base_url or ""),
            "model_own": override.model is not None,
            "model_effective": override.model or db.settings.ai_model,
            "model_key_set": override.api_key_set,
            "model_saved": request.query_params.get("saved") == "ai-model",
            "service_model": db.settings.ai_model,
            "service_base_url": db.settings.ai_base_url,
            "max_model_length": MAX_AI_MODEL_LENGTH,
            "max_base_url_length": MAX_AI_BASE_URL_LENGTH,
            **extra,
        }
        return render(request, "admin/organization_edit.html", context, status_code=status_code)


@router.get("/organizations/{code}/edit")
def edit_organization(request: Request, identity: AdminDep, db: DbDep, code: str) -> Response:
    return _organization_edit_page(request, db, code)


@router.post("/organizations/{code}")
def rename_organization(
    request: Request, identity: AdminDep, db: DbDep, code: str, name: Annotated[str, Form()] = ""
) -> Response:
    try:
        with db.write() as session:
            organization = orgs_service.rename_organization(session, code, name)
            code = organization.organization_code
    except ValidationFailed as error:
        return _organization_edit_page(request, db, code, name=name, **form_error(error))
    return see_other(f"/organizations?renamed={code}")


@router.post("/organizations/{code}/checkpoint-timeout")
def set_organization_checkpoint_timeout(
    request: Request,
    identity: AdminDep,
    db: DbDep,
    code: str,
    checkpoint_timeout_seconds: Annotated[str, Form()] = "",
) -> Response:
    """This organization's Chat Checkpoint wait; empty returns it to the service-wide default."""
    try:
        seconds = parse_timeout(checkpoint_timeout_seconds)
        with db.write() as session:
            code = orgs_service.set_organization_checkpoint_timeout(session, code, seconds).organization_code
    except ValidationFailed as error:
        return _organization_edit_page(
            request,
            db,
            code,
            timeout=checkpoint_timeout_seconds,
            **form_error(error),
        )
    return see_other(f"/organizations/{code}/edit?saved=timeout")


@router.post("/organizations/{code}/ai-model")
def set_organization_ai_model(
    request: Request, identity: AdminDep, db: DbDep, code: str, form: Annotated[ModelForm, Form()]
) -> Response:
    """This organization's own investigator model; an empty model returns it to the service-wide one. An empty key
    field keeps the stored key, the "remove" box drops it; the typed key is never rendered back."""
    box: SecretBox = request.app.state.secret_box
    key = form.ai_api_key.get_secret_value().strip() or ("" if form.remove_ai_api_key == "1" else None)
    try:
        with db.write() as session:
            organization = change_override(
                session, identity.principal, code, box, model=form.ai_model, base_url=form.ai_base_url, api_key=key
            )
            code = organization.organization_code
    except ValidationFailed as error:
        return _organization_edit_page(
            request,
            db,
            code,
            model_form=form,
            error_section="ai-model",
            **form_error(error),
        )
    return see_other(f"/organizations/{code}/edit?saved=ai-model")


# Providers -------------------------------------------------------------------------------------------------------


class ProviderForm(BaseModel):
    alert_provider: str = ""
    name: str = ""


def _providers_page(
    request: Request, db: DbDep, *, form: ProviderForm | None = None, status_code: int = 200, **extra: Any
) -> Response:
    with db.read() as session:
        providers = orgs_service.list_all_providers(session)
        context = {
            "providers": providers,
            "form": form or ProviderForm(),
            "notice": _provider_notice(request),
            "max_name_length": MAX_NAME_LENGTH,
            **extra,
        }
        return render(request, "admin/providers.html", context, status_code=status_code)


def _provider_notice(request: Request) -> str | None:
    params = request.query_params
    notices = {
        "added": "Provider {} added; alerts can use it at once.",
        "renamed": "Provider {} renamed.",
        "enabled": "Provider {} enabled; intake accepts its alerts again.",
        "disabled": "Provider {} disabled; intake now refuses its alerts (422). Existing alerts are kept.",
        "deleted": "Provider {} deleted.",
    }
    for key, text in notices.items():
        if params.get(key):
            return text.format(params[key])
    return None


@router.get("/providers")
def providers(request: Request, identity: AdminDep, db: DbDep) -> Response:
    return _providers_page(request, db)


@router.post("/providers")
def add_provider(request: Request, identity: AdminDep, db: DbDep, form: Annotated[ProviderForm, Form()]) -> Response:
    try:
        with db.write() as session:
            slug = orgs_service.create_provider(session, form.alert_provider, form.name).alert_provider
    except VigilError as error:
        return _providers_page(request, db, form=form, **form_error(error))
    return see_other(f"/providers?added={slug}")


def _provider_edit_page(
    request: Request, db: DbDep, slug: str, *, name: str | None = None, status_code: int = 200, **extra: Any
) -> Response:
    with db.read() as session:
        provider = orgs_service.get_provider(session, slug)
        context = {
            "provider": provider,
            "name": provider.name if name is None else name,
            "max_name_length": MAX_NAME_LENGTH,
            **extra,
        }
        return render(request, "admin/provider_edit.html", context, status_code=status_code)


@router.get("/providers/{slug}/edit")
def edit_provider(request: Request, identity: AdminDep, db: DbDep, slug: str) -> Response:
    return _provider_edit_page(request, db, slug)


@router.post("/providers/{slug}")
def rename_provider(
    request: Request, identity: AdminDep, db: DbDep, slug: str, name: Annotated[str, Form()] = ""
) -> Response:
    try:
        with db.write() as session:
            slug = orgs_service.rename_provider(session, slug, name).alert_provider
    except ValidationFailed as error:
        return _provider_edit_page(request, db, slug, name=name, **form_error(error))
    return see_other(f"/providers?renamed={slug}")


@router.post("/providers/{slug}/enabled")
def set_provider_enabled(
    request: Request, identity: AdminDep, db: DbDep, slug: str, enabled: Annotated[str, Form()] = ""
) -> Response:
    turn_on = enabled == "1"
    with db.write() as session:
        slug = orgs_service.set_provider_enabled(session, slug, enabled=turn_on).alert_provider
    return see_other(f"/providers?{'enabled' if turn_on else 'disabled'}={slug}")


@router.post("/providers/{slug}/delete")
def delete_provider(request: Request, identity: AdminDep, db: DbDep, slug: str) -> Response:
    try:
        with db.write() as session:
            alerts_service.delete_provider(session, slug)
    except VigilError as error:
        if isinstance(error, NotFound):
            raise
        return _provider_edit_page(request, db, slug, **form_error(error))
    return see_other(f"/providers?deleted={slug.strip().lower()}")


# API keys --------------------------------------------------------------------------------------------------------


@router.get("/api-keys")
def api_keys(request: Request, identity: AdminDep, db: DbDep) -> Response:
    with db.read() as session:
        keys = auth_service.list_api_keys(session, newest_first=True)
    highlight = request.query_params.get("created") or request.query_params.get("revoked")
    revoked = request.query_params.get("revoked")
    created = request.query_params.get("created")
    context = {
        "keys": keys,
        "highlight": highlight,
        "revoked_key": next((k for k in keys if str(k.key_uuid) == revoked), None),
        "created_key": next((k for k in keys if str(k.key_uuid) == created), None),
    }
    return render(request, "admin/api_keys.html", context)


class ApiKeyForm(BaseModel):
    name: str = ""
    scope: str = "all"
    organizations: OrganizationCodes = []
    expires_in_days: str = ""


def _new_key_page(
    request: Request, db: DbDep, *, form: ApiKeyForm | None = None, status_code: int = 200, **extra: Any
) -> Response:
    with db.read() as session:
        organizations = orgs_service.list_organizations(session)
        context = {
            "organizations": [(o.organization_code, o.name) for o in organizations],
            "form": form or ApiKeyForm(),
            "max_expiry_days": auth_service.MAX_EXPIRY_DAYS,
            **extra,
        }
    return render(request, "admin/api_key_new.html", context, status_code=status_code)


@router.get("/api-keys/new")
def new_api_key(request: Request, identity: AdminDep, db: DbDep) -> Response:
    return _new_key_page(request, db)


@router.post("/api-keys")
def create_api_key(request: Request, identity: AdminDep, db: DbDep, form: Annotated[ApiKeyForm, Form()]) -> Response:
    """The key is rendered in this POST's own answer (no-store), never put in a URL, and never shown again."""
    try:
        days = _parse_days(form.expires_in_days)
        with db.write() as session:
            created = auth_service.create_api_key(
                session,
                name=form.name,
                created_by=str(identity.user_uuid),
                organization_codes=form.organizations,
                expires_in_days=days,
                all_organizations=form.scope != "some",
            )
    except VigilError as error:
        return _new_key_page(request, db, form=form, **form_error(error))
    return render(request, "admin/api_key_created.html", {"key": created}, status_code=201, headers=NO_STORE)


def parse_timeout(value: str) -> int | None:
    """A checkpoint timeout typed in a form: whole seconds, or empty for the default (the bounds are the service's)."""
    if not value.strip():
        return None
    if not value.strip().isdigit():
        raise ValidationFailed(
            f"The checkpoint timeout must be a whole number of seconds ({MIN_CHECKPOINT_TIMEOUT_SECONDS} to "
            f"{MAX_CHECKPOINT_TIMEOUT_SECONDS}), or empty for the default.",
            code="invalid_checkpoint_timeout",
            details=[{"field": "checkpoint_timeout_seconds"}],
        )
    return int(value.strip())


def _parse_days(value: str) -> int | None:
    if not value.strip():
        return None
    try:
        return int(value.strip())
    except ValueError:
        raise ValidationFailed(
            "Expiry must be a whole number of days, or empty for a key that does not expire.",
            code="invalid_expiry",
            details=[{"field": "expires_in_days"}],
        ) from None


@router.get("/api-keys/{key_uuid}/revoke")
def confirm_revoke(request: Request, identity: AdminDep, db: DbDep, key_uuid: str) -> Response:
    with db.read() as session:
        key = auth_service.get_api_key(session, str(_key_uuid(key_uuid)))
    return render(request, "admin/api_key_revoke.html", {"key": key})


@router.post("/api-keys/{key_uuid}/revoke")
def revoke_api_key(request: Request, identity: AdminDep, db: DbDep, key_uuid: str) -> Response:
    """Idempotent: revoking an already revoked key keeps its first revocation time."""
    with db.write() as session:
        key = auth_service.revoke_api_key(session, str(_key_uuid(key_uuid)))
    return see_other(f"/api-keys?revoked={key.key_uuid}")


# Service-wide settings -------------------------------------------------------------------------------------------


def _settings_page(
    request: Request, db: DbDep, *, timeout: str | None = None, status_code: int = 200, **extra: Any
) -> Response:
    settings = db.settings
    with db.read() as session:
        stored = orgs_service.service_checkpoint_timeout(session)
        effective, _ = orgs_service.default_checkpoint_timeout(session, settings.checkpoint_timeout_seconds)
        changed = orgs_service.service_setting_changed(session, orgs_service.CHECKPOINT_TIMEOUT_KEY)
        organizations = orgs_service.list_organizations(session)
        overrides = [
            (o.organization_code, o.name, human_duration(o.checkpoint_timeout_seconds))
            for o in organizations
            if o.checkpoint_timeout_seconds is not None
        ]
        models = [(o.organization_code, o.name, o.ai_model) for o in organizations if o.ai_model is not None]
        context = {
            "service_model": settings.ai_model,
            "service_base_url": settings.ai_base_url,
            "service_key_set": settings.ai_api_key is not None,
            "model_overrides": models,
            "knowledge_bundles": bundles(),
            "timeout": ("" if stored is None else str(stored)) if timeout is None else timeout,
            "timeout_set": stored is not None,
            "timeout_effective": human_duration(effective),
            "environment_timeout": settings.checkpoint_timeout_seconds,
            "environment_timeout_human": human_duration(settings.checkpoint_timeout_seconds),
            "changed_at": changed.modified_at if changed else None,
            "changed_by": changed.modified_by if changed else None,
            "overrides": overrides,
            "saved": request.query_params.get("saved") == "1",
            "min_timeout": MIN_CHECKPOINT_TIMEOUT_SECONDS,
            "max_timeout": MAX_CHECKPOINT_TIMEOUT_SECONDS,
            **extra,
        }
    return render(request, "admin/settings.html", context, status_code=status_code)


@router.get("/settings")
def service_settings(request: Request, identity: AdminDep, db: DbDep) -> Response:
    return _settings_page(request, db)


@router.post("/settings")
def save_service_settings(
    request: Request, identity: AdminDep, db: DbDep, checkpoint_timeout_seconds: Annotated[str, Form()] = ""
) -> Response:
    """The service-wide Chat Checkpoint wait; empty goes back to the environment's value."""
    try:
        seconds = parse_timeout(checkpoint_timeout_seconds)
        with db.write() as session:
            orgs_service.set_service_checkpoint_timeout(session, seconds, actor=identity.email)
    except ValidationFailed as error:
        return _settings_page(request, db, timeout=checkpoint_timeout_seconds, **form_error(error))
    return see_other("/settings?saved=1")
