"""Console users: argon2 passwords, invitations with a one-time password, roles, and sign-in sessions."""

from __future__ import annotations

import functools
import hashlib
import re
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from vigil.db.base import epoch_now
from vigil.errors import Conflict, NotFound, Unauthenticated, ValidationFailed
from vigil.orgs.models import Organization
from vigil.orgs.service import get_organizations_by_codes
from vigil.users.models import ConsoleSession, ConsoleUser, UserOrganization
from vigil.users.schemas import ConsoleIdentity, Role, UserInvited, UserOut

MIN_PASSWORD_LENGTH = 12
SESSION_LIFETIME_SECONDS = 12 * 3600
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+$")

_hasher = PasswordHasher()


# Verified when the email is unknown, so a sign-in attempt takes as long whether or not the user exists.
# Made on the first sign-in attempt, not at import: hashing costs tens of milliseconds in every process and CLI call.
@functools.cache
def _dummy_hash() -> str:
    return _hasher.hash(secrets.token_urlsafe(16))


def generate_password() -> str:
    return secrets.token_urlsafe(15)


def _clean_email(email: str) -> str:
    cleaned = email.strip().lower()
    if not EMAIL_PATTERN.fullmatch(cleaned) or len(cleaned) > 320:
        raise ValidationFailed(
            "Enter an email address like analyst@example.com.",
            code="invalid_email",
            details=[{"field": "email", "value": email}],
        )
    return cleaned


def _check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ValidationFailed(
            f"Passwords need at least {MIN_PASSWORD_LENGTH} characters.",
            code="weak_password",
            details=[{"field": "password"}],
        )


def create_user(
    session: Session,
    *,
    email: str,
    password: str,
    role: Role,
    name: str = "",
    organization_codes: Sequence[str] = (),
) -> ConsoleUser:
    email = _clean_email(email)
    _check_password(password)
    if session.scalar(select(ConsoleUser.user_uuid).where(ConsoleUser.email == email)) is not None:
        raise Conflict(f"A user {email} already exists.", code="user_exists")
    now = epoch_now()
    user = ConsoleUser(
        user_uuid=uuid.uuid4(),
        email=email,
        name=name.strip() or email.split("@", 1)[0],
        role=Role(role).value,
        password_hash=_hasher.hash(password),
        created_at=now,
        modified_at=now,
    )
    _assign(session, user, organization_codes)
    session.add(user)
    session.flush()
    return user


def _organizations_for_role(role: Role, organization_codes: Sequence[str]) -> list[str]:
    """Admins see every organization, so any list is dropped; analysts and viewers need at least one."""
    codes = [code for code in organization_codes if code.strip()]
    if Role(role) is Role.ADMIN:
        return []
    if not codes:
        raise ValidationFailed(
            f"Choose at least one organization for the {Role(role).value} role (admins see all organizations).",
            code="organizations_required",
            details=[{"field": "organizations"}],
        )
    return codes


def invite_user(
    session: Session, *, email: str, role: Role, name: str = "", organization_codes: Sequence[str] = ()
) -> UserInvited:
    """Create a user with a generated one-time password that the admin passes on (shown only here).

    The user must choose their own password after signing in with it.
    """
    codes = _organizations_for_role(role, organization_codes)
    password = generate_password()
    user = create_user(session, email=email, password=password, role=role, name=name, organization_codes=codes)
    user.must_change_password = True
    session.flush()
    return UserInvited(**describe(session, user).model_dump(), one_time_password=password)


def update_user(
    session: Session,
    user_uuid: uuid.UUID,
    *,
    role: Role,
    name: str,
    organization_codes: Sequence[str],
    acting_user: uuid.UUID,
) -> UserOut:
    user = _get(session, user_uuid)
    if user.user_uuid == acting_user and Role(role) is not Role.ADMIN:
        raise ValidationFailed("You cannot take the admin role away from yourself.", code="self_demotion")
    codes = _organizations_for_role(role, organization_codes)
    if len(name.strip()) > 200:
        raise ValidationFailed("A name can have at most 200 characters.", code="invalid_name")
    user.role = Role(role).value
    user.name = name.strip() or user.name
    _assign(session, user, codes)
    user.modified_at = epoch_now()
    session.flush()
    return describe(session, user)


def set_disabled(session: Session, user_uuid: uuid.UUID, *, disabled: bool, acting_user: uuid.UUID) -> UserOut:
    """Disabling also ends every session of that user at once."""
    user = _get(session, user_uuid)
    if user.user_uuid == acting_user and disabled:
        raise ValidationFailed("You cannot disable your own account.", code="self_disable")
    if disabled and user.disabled_at is None:
        user.disabled_at = epoch_now()
        session.execute(delete(ConsoleSession).where(ConsoleSession.user_uuid == user.user_uuid))
    elif not disabled:
        user.disabled_at = None
    user.modified_at = epoch_now()
    session.flush()
    return describe(session, user)


def reset_password(session: Session, user_uuid: uuid.UUID, *, acting_user: uuid.UUID | None = None) -> UserInvited:
    """A new one-time password; existing sessions of the user end and they choose their own at sign-in."""
    user = _get(session, user_uuid)
    if acting_user is not None and user.user_uuid == acting_user:
        raise ValidationFailed(
            "Change your own password on the Your account page, not with a reset.", code="self_reset"
        )
    password = generate_password()
    user.password_hash = _hasher.hash(password)
    user.must_change_password = True
    user.modified_at = epoch_now()
    session.execute(delete(ConsoleSession).where(ConsoleSession.user_uuid == user.user_uuid))
    session.flush()
    return UserInvited(**describe(session, user).model_dump(), one_time_password=password)


def change_password(session: Session, user_uuid: uuid.UUID, current_password: str, new_password: str) -> None:
    user = _get(session, user_uuid)
    try:
        _hasher.verify(user.password_hash, current_password)
    except (VerificationError, InvalidHashError):
        raise ValidationFailed("The current password is not right.", code="wrong_password") from None
    _check_password(new_password)
    if new_password == current_password:
        raise ValidationFailed("Choose a password different from the current one.", code="same_password")
    user.password_hash = _hasher.hash(new_password)
    user.must_change_password = False
    user.modified_at = epoch_now()
    session.flush()


def list_users(session: Session) -> list[UserOut]:
    return [describe(session, user) for user in session.scalars(select(ConsoleUser).order_by(ConsoleUser.email))]


def get_user(session: Session, user_uuid: uuid.UUID) -> UserOut:
    return describe(session, _get(session, user_uuid))


def count_users(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(ConsoleUser)) or 0


@dataclass(frozen=True)
class BootstrapResult:
    email: str
    generated_password: str | None  # None when the password came from the environment


def bootstrap_admin(session: Session, email: str | None, password: str | None) -> BootstrapResult | None:
    """On first start (no users at all) create an admin; a generated password is returned to print once."""
    if count_users(session) > 0:
        return None
    generated = None if password else generate_password()
    user = create_user(
        session, email=email or "admin@vigil.local", password=password or generated or "", role=Role.ADMIN
    )
    # A printed one-time password is replaced at the first sign-in; an operator-chosen one is kept.
    user.must_change_password = generated is not None
    session.flush()
    return BootstrapResult(email=user.email, generated_password=generated)


def verify_password(session: Session, email: str, password: str) -> ConsoleUser:
    """The user for these credentials, or one generic 401 whatever was wrong (no account probing)."""
    user = session.scalar(select(ConsoleUser).where(ConsoleUser.email == email.strip().lower()))
    try:
        _hasher.verify(user.password_hash if user else _dummy_hash(), password)
    except (VerificationError, InvalidHashError):
        user = None
    if user is None or user.disabled_at is not None:
        raise Unauthenticated("Wrong email or password.", code="invalid_credentials")
    if _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    return user


def start_session(session: Session, user: ConsoleUser) -> str:
    """A new sign-in session; returns the random token for the cookie (only its hash is stored)."""
    token = secrets.token_urlsafe(32)
    now = epoch_now()
    session.execute(delete(ConsoleSession).where(ConsoleSession.expires_at <= now))
    session.add(
        ConsoleSession(
            token_hash=_token_hash(token),
            user_uuid=user.user_uuid,
            created_at=now,
            expires_at=now + SESSION_LIFETIME_SECONDS,
        )
    )
    user.last_login_at = now
    session.flush()
    return token


def end_session(session: Session, token: str) -> None:
    session.execute(delete(ConsoleSession).where(ConsoleSession.token_hash == _token_hash(token)))


def identity_for_session(session: Session, token: str) -> ConsoleIdentity | None:
    """The signed-in user behind a session token, or None if the session ended, expired or the user is disabled."""
    row = session.execute(
        select(ConsoleUser)
        .join(ConsoleSession, ConsoleSession.user_uuid == ConsoleUser.user_uuid)
        .where(ConsoleSession.token_hash == _token_hash(token))
        .where(ConsoleSession.expires_at > epoch_now())
        .where(ConsoleUser.disabled_at.is_(None))
    ).scalar_one_or_none()
    if row is None:
        return None
    return ConsoleIdentity(
        user_uuid=row.user_uuid,
        email=row.email,
        name=row.name,
        role=Role(row.role),
        organization_uuids=frozenset(link.organization_uuid for link in row.organizations),
        must_change_password=row.must_change_password,
    )


def describe(session: Session, user: ConsoleUser) -> UserOut:
    org_uuids = [link.organization_uuid for link in user.organizations]
    codes = (
        sorted(
            session.scalars(select(Organization.organization_code).where(Organization.organization_uuid.in_(org_uuids)))
        )
        if org_uuids
        else []
    )
    return UserOut(
        user_uuid=user.user_uuid,
        email=user.email,
        name=user.name,
        role=Role(user.role),
        organizations=codes,
        created_at=user.created_at,
        last_login_at=user.last_login_at,
        disabled_at=user.disabled_at,
        must_change_password=user.must_change_password,
    )


def _assign(session: Session, user: ConsoleUser, organization_codes: Sequence[str]) -> None:
    """Set the user's organizations, keeping unchanged links (re-adding one would clash on its primary key)."""
    wanted = {o.organization_uuid for o in get_organizations_by_codes(session, [c for c in organization_codes if c])}
    kept = [link for link in user.organizations if link.organization_uuid in wanted]
    present = {link.organization_uuid for link in kept}
    user.organizations = kept + [UserOrganization(organization_uuid=o) for o in sorted(wanted - present)]


def find_by_email(session: Session, email: str) -> ConsoleUser:
    user = session.scalar(select(ConsoleUser).where(ConsoleUser.email == email.strip().lower()))
    if user is None:
        raise NotFound(f"No user {email}.", code="user_not_found")
    return user


def _get(session: Session, user_uuid: uuid.UUID) -> ConsoleUser:
    user = session.get(ConsoleUser, user_uuid)
    if user is None:
        raise NotFound(f"No user {user_uuid}.", code="user_not_found")
    return user


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
