"""Which model investigates an organization's alerts: its own override, else the service's `VIGIL_AI_MODEL`.

An MSSP keeps a customer whose alerts must not leave the building on a local model (an OpenAI-compatible server
reached by its base URL) while the others use the service-wide choice. The override's key is encrypted with the
connection-secret key and never returned.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from pydantic import SecretStr
from sqlalchemy.orm import Session

from vigil.ai.errors import UnsupportedModelError
from vigil.ai.factory import is_builtin
from vigil.ai.llm.config import ModelChoice
from vigil.ai.llm.connect import build_model
from vigil.db.base import epoch_now
from vigil.errors import NotFound, ValidationFailed
from vigil.integrations.secrets import SecretBox
from vigil.orgs.models import Organization
from vigil.orgs.service import get_organization
from vigil.settings import Settings

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
    if is_builtin(model):
        return
    try:
        build_model(choice(model, base_url, api_key), request_timeout_seconds=1.0)
    except UnsupportedModelError as error:
        raise ValidationFailed(
            str(error), code="unsupported_ai_model", details=[{"field": "model", "value": model}]
        ) from error


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
    """Set (or with `model=None` clear) the organization's model; `keep_key` leaves a stored key as it is."""
    organization = get_organization(session, code)
    model = (model or "").strip() or None
    base_url = (base_url or "").strip() or None
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise ValidationFailed(
            "The base URL must start with http:// or https://.",
            code="invalid_base_url",
            details=[{"field": "base_url"}],
        )
    if model is None:
        organization.ai_model = organization.ai_base_url = organization.ai_api_key = None
    else:
        stored = (
            box.decrypt(organization.ai_api_key, what="AI model key")[KEY_FIELD] if organization.ai_api_key else None
        )
        key = stored if keep_key and not api_key else (api_key or None)
        check_model(model, base_url, key)
        organization.ai_model, organization.ai_base_url = model, base_url
        organization.ai_api_key = box.encrypt({KEY_FIELD: key}) if key else None
    organization.modified_at = epoch_now()
    session.flush()
    return organization
