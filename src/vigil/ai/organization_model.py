"""Which model investigates an organization's alerts: its own override, else the service's `VIGIL_AI_MODEL`.

An MSSP keeps a customer whose alerts must not leave the building on a local model (an OpenAI-compatible server
reached by its base URL) while the others use the service-wide choice. The override's key is encrypted with the
connection-secret key and never returned.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import SecretStr
from sqlalchemy.orm import Session

from vigil.ai.errors import UnsupportedModelError
from vigil.ai.factory import check_usable, is_builtin
from vigil.ai.llm.config import OPENAI_PROVIDERS, ModelChoice
from vigil.auth.schemas import Principal
from vigil.db.base import epoch_now
from vigil.errors import Forbidden, NotFound, ValidationFailed
from vigil.integrations.secrets import SecretBox
from vigil.orgs.models import Organization
from vigil.orgs.schemas import MAX_AI_BASE_URL_LENGTH, MAX_AI_MODEL_LENGTH, OrganizationDetail
from vigil.orgs.service import authorize_organization, get_organization, get_organization_by_code
from vigil.settings import Settings

logger = logging.getLogger("vigil.orgs")

KEY_FIELD = "api_key"


def choice(model: str, base_url: str | None, api_key: str | None) -> ModelChoice:
    """A `ModelChoice` whose equality tells keys apart by a digest, never by the key itself."""
    fingerprint = hashlib.sha256(api_key.encode()).hexdigest()[:16] if api_key else ""
    return ModelChoice(
        model=model.strip(),
        base_url=(base_url or "").strip() or None,
        api_key=SecretStr(api_key) if api_key else None,
        key_fingerprint=fingerprint,
    )


def service_choice(settings: Settings) -> ModelChoice:
    key = settings.ai_api_key.get_secret_value() if settings.ai_api_key is not None else None
    return choice(settings.ai_model, settings.ai_base_url, key)


def choice_for(session: Session, organization_uuid: uuid.UUID, settings: Settings, box: SecretBox) -> ModelChoice:
    """The organization's override when it has one, else the service-wide model."""
    organization = session.get(Organization, organization_uuid)
    if organization is None:
        raise NotFound(f"No organization {organization_uuid}.", code="organization_not_found")
    if not organization.ai_model:
        return service_choice(settings)
    key = box.decrypt(organization.ai_api_key, what="AI model key")[KEY_FIELD] if organization.ai_api_key else None
    return choice(organization.ai_model, organization.ai_base_url, key)


@dataclass(frozen=True)
class ModelOverride:
    """What the API and console show of an override: never the key, only whether one is stored."""

    model: str | None
    base_url: str | None
    api_key_set: bool


def override_of(organization: Organization) -> ModelOverride:
    return ModelOverride(organization.ai_model, organization.ai_base_url, organization.ai_api_key is not None)


def check_model(model: str, base_url: str | None, api_key: str | None) -> None:
    """Refuse a model string this build cannot run, before it is stored (the error names the field)."""
    if len(model) > MAX_AI_MODEL_LENGTH:
        raise ValidationFailed(
            f"The model can have at most {MAX_AI_MODEL_LENGTH} characters.",
            code="unsupported_ai_model",
            details=[{"field": "ai_model"}],
        )
    try:
        check_usable(choice(model, base_url, api_key))
    except UnsupportedModelError as error:
        raise ValidationFailed(
            f"{error} (An organization's own model takes its key as ai_api_key and its server as ai_base_url.)",
            code="unsupported_ai_model",
            details=[{"field": "ai_model", "value": model}],
        ) from error


def check_base_url(base_url: str) -> None:
    """An http(s) URL with a host and no credentials in it (a key belongs in the write-only key field)."""
    problem = None
    if len(base_url) > MAX_AI_BASE_URL_LENGTH:
        problem = f"The base URL can have at most {MAX_AI_BASE_URL_LENGTH} characters."
    else:
        try:
            parts = urlsplit(base_url)
            host = parts.hostname
        except ValueError:
            parts, host = None, None
        if parts is None or parts.scheme not in ("http", "https") or not host:
            problem = "The base URL must start with http:// or https:// and name a host."
        elif parts.username is not None or parts.password is not None:
            problem = "The base URL must not hold a user name or password; give the key as the API key."
    if problem:
        raise ValidationFailed(problem, code="invalid_base_url", details=[{"field": "ai_base_url"}])


def _destination(model: str | None, base_url: str | None) -> tuple[str, str | None]:
    """Where a key is sent: the provider (the OpenAI APIs share one) and the base URL."""
    provider = (model or "").partition(":")[0].strip().lower()
    return ("openai" if provider in OPENAI_PROVIDERS else provider), base_url


def set_override(
    session: Session,
    code: str,
    box: SecretBox,
    *,
    model: str | None,
    base_url: str | None = None,
    api_key: str | None = None,
    keep_key: bool = False,
) -> Organization:
    """Set (or with `model=None` clear) the organization's model.

    `keep_key` keeps a stored key when no new one is given, but only while the provider and base URL stay the
    same, so a stored key is never sent to a server it was not entered for. `builtin` keeps no URL or key.
    """
    organization = get_organization(session, code)
    model = (model or "").strip() or None
    base_url = (base_url or "").strip() or None
    if base_url is not None:
        check_base_url(base_url)
    if model is None:
        organization.ai_model = organization.ai_base_url = organization.ai_api_key = None
    elif is_builtin(model):
        check_model(model, None, None)
        organization.ai_model, organization.ai_base_url, organization.ai_api_key = model, None, None
    else:
        stored = organization.ai_api_key
        same_destination = _destination(model, base_url) == _destination(
            organization.ai_model, organization.ai_base_url
        )
        kept = keep_key and not api_key and same_destination and stored is not None
        key = api_key or (box.decrypt(stored, what="AI model key")[KEY_FIELD] if kept and stored else None)
        check_model(model, base_url, key)
        organization.ai_model, organization.ai_base_url = model, base_url
        if not kept:
            organization.ai_api_key = box.encrypt({KEY_FIELD: key}) if key else None
    organization.modified_at = epoch_now()
    session.flush()
    return organization


# API and console ------------------------------------------------------------------------------------------------


def _visible_organization(session: Session, principal: Principal, code: str) -> Organization:
    """The organization a path names, under the shared tenancy rule (`authorize_organization`: a restricted key
    gets 403 alike for an unknown or another tenant's code); an unknown one in a path is 404 for operator staff."""
    organization = get_organization_by_code(session, code)
    if organization is None and principal.all_organizations:
        raise NotFound(f"No organization {code.strip().upper()}.", code="organization_not_found")
    return authorize_organization(principal, code.strip().upper(), organization)


def organization_detail(session: Session, principal: Principal, code: str, settings: Settings) -> OrganizationDetail:
    return describe(_visible_organization(session, principal, code), settings)


def describe(organization: Organization, settings: Settings) -> OrganizationDetail:
    override = override_of(organization)
    return OrganizationDetail(
        organization_code=organization.organization_code,
        organization_uuid=organization.organization_uuid,
        name=organization.name,
        ai_model=override.model,
        ai_base_url=override.base_url,
        ai_api_key_set=override.api_key_set,
        effective_ai_model=override.model or settings.ai_model,
    )


def change_override(
    session: Session,
    principal: Principal,
    code: str,
    box: SecretBox,
    *,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
) -> Organization:
    """The API's and console's change: `api_key` None keeps the stored key (see `set_override`), "" removes it."""
    organization = _visible_organization(session, principal, code)
    if not principal.all_organizations:
        # Like the console, where only admins change an organization's settings: operator staff only.
        raise Forbidden(
            f"{principal.described_as} is limited to some organizations; only a key for all organizations "
            "(operator staff) can change an organization's AI model.",
            code="all_organizations_key_required",
            details=[{"field": "organization_code", "value": organization.organization_code}],
        )
    organization = set_override(
        session,
        organization.organization_code,
        box,
        model=model,
        base_url=base_url,
        api_key=api_key or None,
        keep_key=api_key is None,
    )
    logger.info(
        "organization AI model changed org=%s model=%s base_url=%s key_set=%s actor=%s",
        organization.organization_code,
        organization.ai_model or "(service-wide)",
        organization.ai_base_url,
        organization.ai_api_key is not None,
        principal.actor,
    )
    return organization
