"""API keys: creation (shown once), hashing, verification, scoping, revocation."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.orm import Session

from vigil.auth.models import ApiKey, ApiKeyOrganization
from vigil.auth.schemas import ApiKeyCreated, ApiKeyOut, ApiKeyStatus, Principal
from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.errors import NotFound, Unauthenticated, ValidationFailed
from vigil.orgs.models import Organization
from vigil.orgs.service import get_organizations_by_codes
from vigil.users.models import ConsoleUser

KEY_PREFIX = "vgl_live_"
VISIBLE_PREFIX_LENGTH = len(KEY_PREFIX) + 4
LAST_USED_RESOLUTION_SECONDS = 60
MAX_EXPIRY_DAYS = 3650


def hash_api_key(api_key: str) -> str:
    """Keys are 256-bit random, so a plain SHA-256 is a safe lookup hash (no need for a slow KDF)."""
    return hashlib.sha256(api_key.encode()).hexdigest()


def create_api_key(
    session: Session,
    *,
    name: str,
    created_by: str,
    organization_codes: Sequence[str] = (),
    expires_in_days: int | None = None,
    all_organizations: bool | None = None,
) -> ApiKeyCreated:
    """Create a key for the listed organizations (none listed = all organizations).

    Pass `all_organizations=False` to make an empty list an error instead of meaning "all" (the console's
    "only these organizations" choice with nothing ticked must not silently grant everything).
    """
    if not name.strip():
        raise ValidationFailed("An API key needs a name.", code="invalid_name", details=[{"field": "name"}])
    if len(name.strip()) > 200:
        raise ValidationFailed(
            "An API key name can have at most 200 characters.", code="invalid_name", details=[{"field": "name"}]
        )
    if expires_in_days is not None and not 1 <= expires_in_days <= MAX_EXPIRY_DAYS:
        raise ValidationFailed(
            f"expires_in_days must be between 1 and {MAX_EXPIRY_DAYS}.",
            code="invalid_expiry",
            details=[{"field": "expires_in_days"}],
        )
    if all_organizations is True:
        organization_codes = ()
    elif all_organizations is False and not [c for c in organization_codes if c.strip()]:
        raise ValidationFailed(
            "Choose at least one organization, or allow all organizations.",
            code="no_organizations",
            details=[{"field": "organizations"}],
        )
    organizations = get_organizations_by_codes(session, organization_codes)
    plaintext = KEY_PREFIX + secrets.token_urlsafe(32)
    now = epoch_now()
    key = ApiKey(
        key_uuid=uuid.uuid4(),
        name=name.strip(),
        prefix=plaintext[:VISIBLE_PREFIX_LENGTH],
        key_hash=hash_api_key(plaintext),
        created_by=created_by,
        all_organizations=not organizations,
        created_at=now,
        expires_at=now + expires_in_days * 86400 if expires_in_days else None,
        organizations=[ApiKeyOrganization(organization_uuid=o.organization_uuid) for o in organizations],
    )
    session.add(key)
    session.flush()
    return ApiKeyCreated(**_describe(session, key).model_dump(), api_key=plaintext)


def list_api_keys(session: Session, *, newest_first: bool = False) -> list[ApiKeyOut]:
    order = ApiKey.created_at.desc() if newest_first else ApiKey.created_at
    keys = list(session.scalars(select(ApiKey).order_by(order, ApiKey.name)))
    labels = _creator_labels(session, [key.created_by for key in keys])
    return [_describe(session, key, labels) for key in keys]


def get_api_key(session: Session, key_ref: str) -> ApiKeyOut:
    """One key by UUID or visible prefix (never by the secret), or 404."""
    return _describe(session, _find_key(session, key_ref))


def revoke_api_key(session: Session, key_ref: str) -> ApiKeyOut:
    """Revoke by UUID or by visible prefix; revoking twice keeps the first revocation time."""
    key = _find_key(session, key_ref)
    if key.revoked_at is None:
        key.revoked_at = epoch_now()
        session.flush()
    return _describe(session, key)


def authenticate(db: Database, presented: str | None) -> Principal:
    """Turn a presented key into a principal, or raise 401 saying exactly what is wrong.

    Every API request pays for this, so it is one indexed query (the key and its organizations joined) without
    ORM objects; last_used_at is stamped at most once a minute per key, so intake does not write per request.
    """
    if not presented:
        raise Unauthenticated(
            "Missing API key: send 'Cookie: Session=<API_KEY>' or 'Authorization: Bearer <API_KEY>'.",
            code="missing_api_key",
        )
    with db.read() as session:
        found = _key_rows(session, ApiKey.key_hash == hash_api_key(presented))
    if not found:
        raise _invalid_key()
    rows = next(iter(found.values()))
    principal = _principal(rows, epoch_now())
    if _needs_stamp(rows):
        with db.write() as session:
            _stamp_last_used(session, principal.actor_uuid)
    return principal


def current_principals(
    session: Session, key_uuids: Collection[uuid.UUID]
) -> dict[uuid.UUID, Principal | Unauthenticated]:
    """Check keys again inside the caller's write transaction: each one's principal as of now, or why it fails.

    Intake recognises a key from a short-lived memo on the request path and relies on this check, made in the
    transaction that stores the alerts, so a key revoked before that transaction stores nothing.
    """
    found = _key_rows(session, ApiKey.key_uuid.in_(list(key_uuids)))
    now = epoch_now()
    checked: dict[uuid.UUID, Principal | Unauthenticated] = {}
    for key_uuid in key_uuids:
        rows = found.get(key_uuid)
        if not rows:
            checked[key_uuid] = _invalid_key()
            continue
        try:
            checked[key_uuid] = _principal(rows, now)
        except Unauthenticated as refused:
            checked[key_uuid] = refused
            continue
        if _needs_stamp(rows):
            _stamp_last_used(session, key_uuid)
    return checked


def _key_rows(session: Session, condition: ColumnElement[bool]) -> dict[uuid.UUID, list[Any]]:
    """The matching keys, each with one row per organization it may use (one row with None if it has none)."""
    rows = session.execute(
        select(
            ApiKey.key_uuid,
            ApiKey.name,
            ApiKey.all_organizations,
            ApiKey.expires_at,
            ApiKey.revoked_at,
            ApiKey.last_used_at,
            ApiKeyOrganization.organization_uuid,
        )
        .outerjoin(ApiKeyOrganization, ApiKeyOrganization.key_uuid == ApiKey.key_uuid)
        .where(condition)
    ).all()
    grouped: dict[uuid.UUID, list[Any]] = {}
    for row in rows:
        grouped.setdefault(row.key_uuid, []).append(row)
    return grouped


def _principal(rows: list[Any], now: int) -> Principal:
    key = rows[0]
    if key.revoked_at is not None:
        raise Unauthenticated("The API key has been revoked.", code="revoked_api_key")
    if key.expires_at is not None and key.expires_at <= now:
        raise Unauthenticated("The API key has expired.", code="expired_api_key")
    return Principal(
        actor_uuid=key.key_uuid,
        name=key.name,
        all_organizations=key.all_organizations,
        organization_uuids=frozenset(row.organization_uuid for row in rows if row.organization_uuid is not None),
    )


def _needs_stamp(rows: list[Any]) -> bool:
    last_used: int | None = rows[0].last_used_at
    return last_used is None or last_used <= epoch_now() - LAST_USED_RESOLUTION_SECONDS


def _invalid_key() -> Unauthenticated:
    return Unauthenticated("The API key is not valid.", code="invalid_api_key")


def _stamp_last_used(session: Session, key_uuid: uuid.UUID) -> None:
    now = epoch_now()
    session.execute(
        update(ApiKey)
        .where(ApiKey.key_uuid == key_uuid)
        .where((ApiKey.last_used_at.is_(None)) | (ApiKey.last_used_at <= now - LAST_USED_RESOLUTION_SECONDS))
        .values(last_used_at=now)
    )


def _find_key(session: Session, key_ref: str) -> ApiKey:
    try:
        key = session.get(ApiKey, uuid.UUID(key_ref))
    except ValueError:
        key = session.scalar(select(ApiKey).where(ApiKey.prefix == key_ref))
    if key is None:
        raise NotFound(f"No API key {key_ref}.", code="api_key_not_found")
    return key


def _creator_labels(session: Session, actors: Sequence[str]) -> dict[str, str]:
    """Console users are stored by UUID (their email can change); show their current email."""
    user_uuids: set[uuid.UUID] = set()
    for actor in actors:
        try:
            user_uuids.add(uuid.UUID(actor))
        except ValueError:
            continue
    if not user_uuids:
        return {}
    rows = session.execute(
        select(ConsoleUser.user_uuid, ConsoleUser.email).where(ConsoleUser.user_uuid.in_(user_uuids))
    )
    return {str(user_uuid): email for user_uuid, email in rows}


def _status(key: ApiKey, now: int) -> ApiKeyStatus:
    if key.revoked_at is not None:
        return ApiKeyStatus.REVOKED
    if key.expires_at is not None and key.expires_at <= now:
        return ApiKeyStatus.EXPIRED
    return ApiKeyStatus.ACTIVE


def _describe(session: Session, key: ApiKey, labels: dict[str, str] | None = None) -> ApiKeyOut:
    if labels is None:
        labels = _creator_labels(session, [key.created_by])
    codes: list[str] | None = None
    if not key.all_organizations:
        org_uuids = [link.organization_uuid for link in key.organizations]
        codes = sorted(
            session.scalars(select(Organization.organization_code).where(Organization.organization_uuid.in_(org_uuids)))
        )
    return ApiKeyOut(
        key_uuid=key.key_uuid,
        name=key.name,
        prefix=key.prefix,
        created_by=key.created_by,
        created_by_label=labels.get(key.created_by, key.created_by),
        status=_status(key, epoch_now()),
        organizations=codes,
        created_at=key.created_at,
        expires_at=key.expires_at,
        revoked_at=key.revoked_at,
        last_used_at=key.last_used_at,
    )
