"""Tenancy rules: organization codes, the provider catalog, and who may see which organization."""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from vigil.auth.schemas import Principal, organization_forbidden
from vigil.db.base import epoch_now
from vigil.errors import Conflict, ValidationFailed
from vigil.orgs.models import Organization, Provider
from vigil.orgs.schemas import ORGANIZATION_CODE_PATTERN, PROVIDER_SLUG_PATTERN


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
    now = epoch_now()
    organization = Organization(
        organization_uuid=uuid.uuid4(),
        organization_code=code,
        name=name or code,
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
            raise organization_forbidden(code)
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


def get_organizations_by_codes(session: Session, codes: Collection[str]) -> list[Organization]:
    """Resolve codes, failing with the first unknown one named."""
    found = []
    for code in codes:
        organization = get_organization_by_code(session, code)
        if organization is None:
            raise ValidationFailed(f"Unknown organization code {code.upper()}.", code="unknown_organization_code")
        found.append(organization)
    return found


def list_organizations(session: Session, only: Collection[uuid.UUID] | None = None) -> list[Organization]:
    """All organizations, or only those in `only` (a restricted API key's list)."""
    query = select(Organization).order_by(Organization.organization_code)
    if only is not None:
        query = query.where(Organization.organization_uuid.in_(list(only)))
    return list(session.scalars(query))


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
    provider = Provider(alert_provider=slug, name=name or slug, enabled=True, built_in=False, created_at=epoch_now())
    session.add(provider)
    session.flush()
    return provider


def get_enabled_provider(session: Session, slug: str) -> Provider | None:
    provider = session.get(Provider, slug.strip().lower())
    return provider if provider is not None and provider.enabled else None


def list_providers(session: Session) -> list[Provider]:
    return list(session.scalars(select(Provider).where(Provider.enabled.is_(True)).order_by(Provider.alert_provider)))
