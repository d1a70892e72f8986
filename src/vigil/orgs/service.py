"""Tenancy rules: organization codes, the provider catalog, who may see which organization, and the
service-wide settings admins change in the console."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Collection

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from vigil.auth.schemas import Principal
from vigil.auth.scope import scoped
from vigil.db.base import epoch_now
from vigil.db.upsert import dialect_insert
from vigil.errors import Conflict, NotFound, ValidationFailed
from vigil.input_types import MAX_CHECKPOINT_TIMEOUT_SECONDS, MIN_CHECKPOINT_TIMEOUT_SECONDS
from vigil.orgs.models import Organization, Provider, ServiceSetting
from vigil.orgs.schemas import (
    MAX_NAME_LENGTH,
    ORGANIZATION_CODE_PATTERN,
    PROVIDER_SLUG_PATTERN,
)

CHECKPOINT_TIMEOUT_KEY = "checkpoint_timeout_seconds"


def _clean_name(name: str | None, default: str, field: str) -> str:
    """A display name: trimmed, the default when blank, at most MAX_NAME_LENGTH characters."""
    cleaned = (name or "").strip() or default
    if len(cleaned) > MAX_NAME_LENGTH:
        raise ValidationFailed(
            f"The name can have at most {MAX_NAME_LENGTH} characters.",
            code="invalid_name",
            details=[{"field": field}],
        )
    return cleaned


def create_organization(session: Session, code: str, name: str | None = None) -> Organization:
    code = code.strip().upper()
    if not re.fullmatch(ORGANIZATION_CODE_PATTERN, code):
        raise ValidationFailed(
            "organization_code must be 2 to 16 characters of A-Z and 0-9.",
            code="invalid_organization_code",
            details=[{"field": "organization_code", "value": code}],
        )
    if get_organization_by_code(session, code) is not None:
        raise Conflict(f"Organization {code} already exists.", code="organization_exists")
    display_name = _clean_name(name, code, "name")
    now = epoch_now()
    organization = Organization(
        organization_uuid=uuid.uuid4(),
        organization_code=code,
        name=display_name,
        created_at=now,
        modified_at=now,
    )
    session.add(organization)
    session.flush()
    return organization


def get_organization_by_code(session: Session, code: str) -> Organization | None:
    return session.scalar(select(Organization).where(Organization.organization_code == code.strip().upper()))


def authorize_organization(principal: Principal, code: str, organization: Organization | None) -> Organization:
    """The organization a request names, if this principal may use it.

    Unknown codes are 422 for all-organization keys; a restricted key only ever sees 403, so it
    cannot probe which other tenants exist.
    """
    if organization is None:
        if not principal.all_organizations:
            raise principal.forbidden(code)
        raise ValidationFailed(
            f"Unknown organization_code {code!r}; list valid values with GET /serviceapi/organizations.",
            code="unknown_organization_code",
            details=[{"field": "organization_code", "value": code}],
        )
    principal.require_access(organization.organization_uuid, organization.organization_code)
    return organization


def organization_for(session: Session, principal: Principal, code: str) -> Organization:
    code = code.strip().upper()
    return authorize_organization(principal, code, get_organization_by_code(session, code))


def get_organization(session: Session, code: str) -> Organization:
    """An organization by code for administration, or 404."""
    organization = get_organization_by_code(session, code)
    if organization is None:
        raise NotFound(f"No organization {code.strip().upper()}.", code="organization_not_found")
    return organization


def rename_organization(session: Session, code: str, name: str) -> Organization:
    """Change the display name; the code never changes, since every alert_id and case_id contains it."""
    organization = get_organization(session, code)
    if not name.strip():
        raise ValidationFailed("Enter a name.", code="invalid_name", details=[{"field": "name"}])
    organization.name = _clean_name(name, organization.organization_code, "name")
    organization.modified_at = epoch_now()
    session.flush()
    return organization


def set_organization_checkpoint_timeout(session: Session, code: str, seconds: int | None) -> Organization:
    """This organization's Chat Checkpoint wait; None returns it to the service-wide default."""
    organization = get_organization(session, code)
    organization.checkpoint_timeout_seconds = check_checkpoint_timeout(seconds, "checkpoint_timeout_seconds")
    organization.modified_at = epoch_now()
    session.flush()
    return organization


def check_checkpoint_timeout(seconds: int | None, field: str) -> int | None:
    """The bounds every checkpoint timeout keeps (a playbook step's own has the same ones)."""
    if seconds is not None and not MIN_CHECKPOINT_TIMEOUT_SECONDS <= seconds <= MAX_CHECKPOINT_TIMEOUT_SECONDS:
        raise ValidationFailed(
            f"The checkpoint timeout must be from {MIN_CHECKPOINT_TIMEOUT_SECONDS} to "
            f"{MAX_CHECKPOINT_TIMEOUT_SECONDS} seconds (7 days).",
            code="invalid_checkpoint_timeout",
            details=[{"field": field, "value": seconds}],
        )
    return seconds


def service_checkpoint_timeout(session: Session) -> int | None:
    """The service-wide Chat Checkpoint wait set in the console; None: the environment's value applies."""
    setting = session.get(ServiceSetting, CHECKPOINT_TIMEOUT_KEY)
    if setting is None:
        return None
    value = json.loads(setting.value)
    return value if isinstance(value, int) else None


def default_checkpoint_timeout(session: Session, environment_seconds: int) -> tuple[int, str]:
    """The wait every organization without its own override gets, and where it comes from: the console's
    service-wide setting ("service") or `VIGIL_CHECKPOINT_TIMEOUT_SECONDS` ("environment")."""
    stored = service_checkpoint_timeout(session)
    return (stored, "service") if stored is not None else (environment_seconds, "environment")


def set_service_checkpoint_timeout(session: Session, seconds: int | None, *, actor: str) -> None:
    """Set (or, with None, remove) the service-wide Chat Checkpoint wait; two admins saving at once both land."""
    check_checkpoint_timeout(seconds, "checkpoint_timeout_seconds")
    if seconds is None:
        session.execute(delete(ServiceSetting).where(ServiceSetting.key == CHECKPOINT_TIMEOUT_KEY))
        return
    values = {"value": json.dumps(seconds), "modified_at": epoch_now(), "modified_by": actor[:320]}
    session.execute(
        dialect_insert(session, ServiceSetting)
        .values(key=CHECKPOINT_TIMEOUT_KEY, **values)
        .on_conflict_do_update(index_elements=[ServiceSetting.key], set_=values)
    )
    session.get(ServiceSetting, CHECKPOINT_TIMEOUT_KEY, populate_existing=True)  # later reads see the new value


def service_setting_changed(session: Session, key: str) -> ServiceSetting | None:
    """The stored row of a service-wide setting (who changed it, when), or None while it is unset."""
    return session.get(ServiceSetting, key)


def get_organizations_by_codes(session: Session, codes: Collection[str]) -> list[Organization]:
    """Resolve codes, failing with the first unknown one named."""
    found = []
    for code in codes:
        organization = get_organization_by_code(session, code)
        if organization is None:
            raise ValidationFailed(f"Unknown organization code {code.upper()}.", code="unknown_organization_code")
        found.append(organization)
    return found


def list_organizations(session: Session, principal: Principal | None = None) -> list[Organization]:
    """The organizations a principal may use; every one without a principal (administration, the CLI)."""
    query = select(Organization).order_by(Organization.organization_code)
    return list(session.scalars(query if principal is None else scoped(query, principal)))


def create_provider(session: Session, slug: str, name: str | None = None) -> Provider:
    slug = slug.strip().lower()
    if not re.fullmatch(PROVIDER_SLUG_PATTERN, slug):
        raise ValidationFailed(
            "alert_provider must be a lowercase slug: a letter, then letters, digits or '_' (2-64).",
            code="invalid_provider",
            details=[{"field": "alert_provider", "value": slug}],
        )
    if session.get(Provider, slug) is not None:
        raise Conflict(f"Provider {slug} already exists.", code="provider_exists")
    display_name = _clean_name(name, slug, "name")
    provider = Provider(alert_provider=slug, name=display_name, enabled=True, built_in=False, created_at=epoch_now())
    session.add(provider)
    session.flush()
    return provider


def get_enabled_provider(session: Session, slug: str) -> Provider | None:
    provider = session.get(Provider, slug.strip().lower())
    return provider if provider is not None and provider.enabled else None


def list_providers(session: Session) -> list[Provider]:
    return list(session.scalars(select(Provider).where(Provider.enabled.is_(True)).order_by(Provider.alert_provider)))


def list_all_providers(session: Session) -> list[Provider]:
    """Every provider, enabled or not (administration); E3 lists only the enabled ones."""
    return list(session.scalars(select(Provider).order_by(Provider.built_in.desc(), Provider.alert_provider)))


def get_provider(session: Session, slug: str) -> Provider:
    provider = session.get(Provider, slug.strip().lower())
    if provider is None:
        raise NotFound(f"No provider {slug}.", code="provider_not_found")
    return provider


def rename_provider(session: Session, slug: str, name: str) -> Provider:
    provider = get_provider(session, slug)
    if not name.strip():
        raise ValidationFailed("Enter a display name.", code="invalid_name", details=[{"field": "name"}])
    provider.name = _clean_name(name, provider.alert_provider, "name")
    session.flush()
    return provider


def set_provider_enabled(session: Session, slug: str, *, enabled: bool) -> Provider:
    """A disabled provider is refused at intake (422) and left out of E3; its existing alerts stay."""
    provider = get_provider(session, slug)
    provider.enabled = enabled
    session.flush()
    return provider
