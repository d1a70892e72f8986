"""Connections (integration instances): validation against the integration's declared fields, tenant scoping,
encryption of secret values, the SkillContext the engine runs skills with, connection tests and key rotation."""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from secrets import token_urlsafe

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from vigil.auth.schemas import Principal
from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.errors import Conflict, NotFound, ValidationFailed
from vigil.integrations.catalog import get_integration
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import ConnectionTestResult, Endpoints, SkillContext
from vigil.integrations.http import OutboundClient
from vigil.integrations.models import Connection
from vigil.integrations.runner import test_connection
from vigil.integrations.schemas import (
    MASK,
    ConnectionCreate,
    ConnectionOut,
    ConnectionTestOut,
    ConnectionUpdate,
    mask_secret,
)
from vigil.integrations.secrets import SecretBox, SecretsUndecryptable
from vigil.integrations.validation import resolve_integration, resolve_values
from vigil.orgs.models import Organization
from vigil.orgs.service import organization_for
from vigil.settings import Settings

logger = logging.getLogger("vigil.connections")


class ConnectionExpired(IntegrationError):
    """The only connection that could serve a skill has expired; permanent until someone renews it."""

    def __init__(self, connection: Connection) -> None:
        super().__init__(
            "connection_expired",
            f"Connection '{connection.name}' ({connection.integration_id}) expired at {connection.expires_at} "
            "and is not used.",
            cause="Connection expired",
            remedy=f"Renew the credentials of connection '{connection.name}' and set a new expiry (or remove it).",
        )


class ConnectionMissing(IntegrationError):
    """A playbook named a connection the organization does not have."""

    def __init__(self, integration_id: str, name: str) -> None:
        super().__init__(
            "connection_not_found",
            f"The organization has no {integration_id} connection named '{name}'.",
            cause="Connection not found",
            remedy=f"Create a {integration_id} connection named '{name}', or change the playbook step's connection.",
        )


def endpoints_from_settings(settings: Settings) -> Endpoints:
    return Endpoints(
        mde_auth_url=settings.mde_auth_url,
        mde_api_url=settings.mde_api_url,
        edge_api_url=settings.edge_api_url,
        chat_api_url=settings.chat_api_url,
    )


# --- validation ----------------------------------------------------------------------------------------------


def _clean_name(session: Session, organization_uuid: uuid.UUID, name: str, keep: uuid.UUID | None = None) -> str:
    text = name.strip()
    if not text or any(ord(c) < 32 for c in text):
        raise ValidationFailed(
            "name must be non-empty printable text.", code="invalid_name", details=[{"field": "name"}]
        )
    clash = session.scalar(
        select(Connection.connection_uuid).where(
            Connection.organization_uuid == organization_uuid, Connection.name == text
        )
    )
    if clash is not None and clash != keep:
        raise _name_conflict(text)
    return text


def _name_conflict(name: str) -> Conflict:
    return Conflict(
        f"This organization already has a connection named '{name}'.",
        code="connection_name_exists",
        details=[{"field": "name", "value": name}],
    )


def _check_expiry(expires_at: int | None) -> None:
    if expires_at is not None and expires_at <= epoch_now():
        raise ValidationFailed("expires_at is in the past.", code="invalid_expiry", details=[{"field": "expires_at"}])


# --- create / read / update / delete ------------------------------------------------------------------------------


def create_connection(
    session: Session, principal: Principal, payload: ConnectionCreate, box: SecretBox, *, created_by: str | None = None
) -> Connection:
    organization = organization_for(session, principal, payload.organization_code)
    integration = resolve_integration(payload.integration_id)
    name = _clean_name(session, organization.organization_uuid, payload.name)
    _check_expiry(payload.expires_at)
    resolved = resolve_values(integration, dict(payload.fields), auth_method=payload.auth_method)
    now = epoch_now()
    connection = Connection(
        connection_uuid=uuid.uuid4(),
        organization_uuid=organization.organization_uuid,
        integration_id=integration.id,
        name=name,
        description=payload.description.strip(),
        auth_method=resolved.auth_method,
        plain_values=json.dumps(resolved.plain, sort_keys=True),
        secret_values=box.encrypt(resolved.secret),
        expires_at=payload.expires_at,
        webhook_token=token_urlsafe(32),
        created_at=now,
        modified_at=now,
        created_by=created_by or str(principal.actor_uuid),
    )
    session.add(connection)
    _flush_unique(session, name)
    logger.info(
        "connection created org=%s integration=%s connection=%s",
        organization.organization_code,
        integration.id,
        connection.connection_uuid,
    )
    return connection


def _flush_unique(session: Session, name: str) -> None:
    """A concurrent create with the same name loses at the unique constraint; that is a 409 too."""
    try:
        session.flush()
    except IntegrityError:
        raise _name_conflict(name) from None


def list_connections(
    session: Session, principal: Principal, organization_code: str | None = None, integration_id: str | None = None
) -> list[tuple[Connection, str]]:
    """Connections with their organization code, limited to what the principal may see."""
    query = (
        select(Connection, Organization.organization_code)
        .join(Organization, Organization.organization_uuid == Connection.organization_uuid)
        .order_by(Organization.organization_code, Connection.integration_id, Connection.name)
    )
    if organization_code is not None:
        query = query.where(
            Connection.organization_uuid == organization_for(session, principal, organization_code).organization_uuid
        )
    elif principal.organization_scope is not None:
        query = query.where(Connection.organization_uuid.in_(list(principal.organization_scope)))
    if integration_id is not None:
        query = query.where(Connection.integration_id == resolve_integration(integration_id).id)
    return [(row[0], row[1]) for row in session.execute(query)]


def get_connection(session: Session, principal: Principal, connection_uuid: uuid.UUID) -> tuple[Connection, str]:
    """One connection; another tenant's is a 403 (as for alerts), an unknown id a 404."""
    row = session.execute(
        select(Connection, Organization.organization_code)
        .join(Organization, Organization.organization_uuid == Connection.organization_uuid)
        .where(Connection.connection_uuid == connection_uuid)
    ).first()
    if row is None:
        raise NotFound(f"No connection {connection_uuid}.", code="connection_not_found")
    connection, code = row[0], row[1]
    principal.require_access(connection.organization_uuid, code)
    return connection, code


def find_connection(session: Session, organization_code: str, name: str, principal: Principal) -> Connection:
    """By organization and instance name (the CLI's way of naming one)."""
    organization = organization_for(session, principal, organization_code)
    connection = session.scalar(
        select(Connection).where(
            Connection.organization_uuid == organization.organization_uuid, Connection.name == name.strip()
        )
    )
    if connection is None:
        raise NotFound(
            f"{organization.organization_code} has no connection named '{name}'.", code="connection_not_found"
        )
    return connection


def update_connection(
    session: Session, principal: Principal, connection_uuid: uuid.UUID, payload: ConnectionUpdate, box: SecretBox
) -> tuple[Connection, str]:
    connection, code = get_connection(session, principal, connection_uuid)
    integration = get_integration(connection.integration_id)
    given = payload.model_fields_set
    if payload.name is not None:
        connection.name = _clean_name(
            session, connection.organization_uuid, payload.name, keep=connection.connection_uuid
        )
    if payload.description is not None:
        connection.description = payload.description.strip()
    if "expires_at" in given:
        _check_expiry(payload.expires_at)
        connection.expires_at = payload.expires_at
    if payload.fields or payload.auth_method is not None:
        current = {**json.loads(connection.plain_values), **box.decrypt(connection.secret_values)}
        resolved = resolve_values(
            integration,
            payload.fields,
            auth_method=payload.auth_method,
            current=current,
            current_auth_method=connection.auth_method,
        )
        connection.auth_method = resolved.auth_method
        connection.plain_values = json.dumps(resolved.plain, sort_keys=True)
        connection.secret_values = box.encrypt(resolved.secret)
    connection.modified_at = epoch_now()
    _flush_unique(session, connection.name)
    logger.info("connection updated connection=%s fields=%s", connection.connection_uuid, sorted(payload.fields))
    return connection, code


def delete_connection(session: Session, principal: Principal, connection_uuid: uuid.UUID) -> None:
    connection, _code = get_connection(session, principal, connection_uuid)
    session.delete(connection)
    session.flush()
    logger.info("connection deleted connection=%s", connection_uuid)


def rotate_webhook_token(session: Session, principal: Principal, connection_uuid: uuid.UUID) -> tuple[Connection, str]:
    """A new token for the inbound chat URLs; the old one stops working at once."""
    connection, code = get_connection(session, principal, connection_uuid)
    connection.webhook_token = token_urlsafe(32)
    connection.modified_at = epoch_now()
    session.flush()
    return connection, code


def connection_by_webhook_token(session: Session, token: str) -> Connection | None:
    """The connection an inbound chat request (E4/E5 ``?token=``) belongs to."""
    if not token:
        return None
    return session.scalar(select(Connection).where(Connection.webhook_token == token))


# --- presentation ---------------------------------------------------------------------------------------------


def is_expired(connection: Connection, now: int | None = None) -> bool:
    return connection.expires_at is not None and connection.expires_at <= (epoch_now() if now is None else now)


def describe(connection: Connection, organization_code: str, box: SecretBox) -> ConnectionOut:
    """The API/console view: secret values masked, never returned."""
    integration = get_integration(connection.integration_id)
    try:
        secret = box.decrypt(connection.secret_values, what=f"secrets of connection '{connection.name}'")
        masked = {name: mask_secret(value) for name, value in secret.items()}
    except SecretsUndecryptable:
        logger.warning("connection secrets undecryptable connection=%s", connection.connection_uuid)
        masked = {name: MASK for name in integration.secret_field_names()}
    return ConnectionOut(
        connection_uuid=connection.connection_uuid,
        organization_code=organization_code,
        organization_uuid=connection.organization_uuid,
        integration_id=connection.integration_id,
        integration_name=integration.name,
        name=connection.name,
        description=connection.description,
        auth_method=connection.auth_method,
        fields={**json.loads(connection.plain_values), **masked},
        secret_fields=sorted(masked),
        expires_at=connection.expires_at,
        expired=is_expired(connection),
        webhook_token=connection.webhook_token,
        last_test_ok=connection.last_test_ok,
        last_test_at=connection.last_test_at,
        last_test_status_code=connection.last_test_status_code,
        last_test_cause=connection.last_test_cause,
        last_test_remedy=connection.last_test_remedy,
        last_test_detail=connection.last_test_detail,
        created_at=connection.created_at,
        modified_at=connection.modified_at,
        created_by=connection.created_by,
    )


# --- what the engine uses ----------------------------------------------------------------------------------------


def connection_values(connection: Connection, box: SecretBox) -> dict[str, str]:
    """Every field value in clear (plain + decrypted secrets + auth method + declared defaults)."""
    integration = get_integration(connection.integration_id)
    values: dict[str, str] = {
        **json.loads(connection.plain_values),
        **box.decrypt(connection.secret_values, what=f"secrets of connection '{connection.name}'"),
    }
    if integration.auth_method_field and connection.auth_method:
        values[integration.auth_method_field] = connection.auth_method
    for field in integration.fields:
        if field.default is not None and not values.get(field.name):
            values[field.name] = field.default
    return values


def build_skill_context(
    connection: Connection, *, box: SecretBox, endpoints: Endpoints, http: OutboundClient
) -> SkillContext:
    return SkillContext(
        values=connection_values(connection, box),
        connection_key=str(connection.connection_uuid),
        endpoints=endpoints,
        http=http,
    )


def skill_context_for(
    session: Session,
    organization_uuid: uuid.UUID,
    integration_id: str,
    name: str | None = None,
    *,
    box: SecretBox,
    endpoints: Endpoints,
    http: OutboundClient,
) -> SkillContext | None:
    """The context to run one of ``integration_id``'s skills for an organization.

    ``name`` picks a connection; without it the usable one that last tested OK (then the oldest) is chosen.
    Returns None when the organization has no connection of the integration; raises ``ConnectionExpired`` when
    every candidate has expired and ``ConnectionMissing`` when a named connection does not exist.
    """
    query = select(Connection).where(
        Connection.organization_uuid == organization_uuid, Connection.integration_id == integration_id
    )
    if name is not None:
        query = query.where(Connection.name == name.strip())
    candidates = list(session.scalars(query.order_by(Connection.created_at, Connection.name)))
    if not candidates:
        if name is not None:
            raise ConnectionMissing(integration_id, name)
        return None
    now = epoch_now()
    usable = [c for c in candidates if not is_expired(c, now)]
    if not usable:
        raise ConnectionExpired(candidates[0])
    chosen = next((c for c in usable if c.last_test_ok), usable[0])
    return build_skill_context(chosen, box=box, endpoints=endpoints, http=http)


async def run_connection_test(
    db: Database,
    principal: Principal,
    connection_uuid: uuid.UUID,
    *,
    box: SecretBox,
    endpoints: Endpoints,
    http: OutboundClient,
) -> ConnectionTestOut:
    """Authenticate/Test against the vendor and store the outcome; no database transaction spans the HTTP calls."""

    def load() -> tuple[Connection, SkillContext | None]:
        with db.read() as session:
            connection, _code = get_connection(session, principal, connection_uuid)
            if is_expired(connection):
                return connection, None
            return connection, build_skill_context(connection, box=box, endpoints=endpoints, http=http)

    connection, ctx = await asyncio.to_thread(load)
    if ctx is None:
        result = ConnectionTestResult(
            ok=False,
            cause="Connection expired",
            remedy="Renew the credentials, then set a new expiry on the connection (or remove it).",
        )
    else:
        result = await test_connection(connection.integration_id, ctx)
    tested_at = epoch_now()

    def store() -> None:
        with db.write() as session:
            session.execute(
                update(Connection)
                .where(Connection.connection_uuid == connection_uuid, Connection.modified_at == connection.modified_at)
                .values(
                    last_test_ok=result.ok,
                    last_test_at=tested_at,
                    last_test_status_code=result.status_code,
                    last_test_cause=result.cause,
                    last_test_remedy=result.remedy,
                    last_test_detail=result.detail,
                )
            )

    await asyncio.to_thread(store)
    logger.info("connection tested connection=%s ok=%s", connection_uuid, result.ok)
    return ConnectionTestOut(connection_uuid=connection_uuid, tested_at=tested_at, **result.model_dump())
