"""Connections (integration instances): validation against the integration's declared fields, tenant scoping,
encryption of secret values, the SkillContext the engine runs skills with, connection tests and key rotation."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import uuid
from collections.abc import Mapping
from secrets import token_urlsafe
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from vigil.auth.schemas import Principal
from vigil.auth.scope import scoped
from vigil.db.base import epoch_now
from vigil.db.session import Database
from vigil.errors import Conflict, NotFound, ValidationFailed
from vigil.integrations.catalog import all_integrations, catalog_json, get_integration
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import ConnectionTestResult, Endpoints, Integration, SkillContext
from vigil.integrations.http import OutboundClient
from vigil.integrations.models import Connection
from vigil.integrations.policy import OutboundPolicy
from vigil.integrations.runner import test_connection
from vigil.integrations.schemas import (
    MASK,
    ConnectionCreate,
    ConnectionOut,
    ConnectionTestOut,
    ConnectionUpdate,
    ParameterTable,
    SkillDoc,
    SkillParameter,
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
    """The configured vendor base URLs; a key no integration declares is refused at start, not silently unused."""
    declared = {url.key for integration in all_integrations() for url in integration.base_urls}
    unknown = sorted(set(settings.vendor_urls) - declared)
    if unknown:
        raise ValueError(
            f"VIGIL_VENDOR_URLS names unknown base URLs {', '.join(unknown)}; known: {', '.join(sorted(declared))}."
        )
    return Endpoints(dict(settings.vendor_urls))


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
    session: Session,
    principal: Principal,
    payload: ConnectionCreate,
    box: SecretBox,
    *,
    created_by: str | None = None,
    policy: OutboundPolicy | None = None,
) -> Connection:
    organization = organization_for(session, principal, payload.organization_code)
    integration = resolve_integration(payload.integration_id)
    name = _clean_name(session, organization.organization_uuid, payload.name)
    _check_expiry(payload.expires_at)
    resolved = resolve_values(
        integration,
        dict(payload.fields),
        auth_method=payload.auth_method,
        policy=policy or OutboundPolicy.from_environment(),
    )
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
    else:
        query = scoped(query, principal)
    if integration_id is not None:
        query = query.where(Connection.integration_id == resolve_integration(integration_id).id)
    return [(row[0], row[1]) for row in session.execute(query)]


def get_connection(session: Session, principal: Principal, connection_uuid: uuid.UUID) -> tuple[Connection, str]:
    """One connection; another tenant's is not found, exactly like an unknown id (a 404 that names nothing)."""
    row = session.execute(
        scoped(
            select(Connection, Organization.organization_code)
            .join(Organization, Organization.organization_uuid == Connection.organization_uuid)
            .where(Connection.connection_uuid == connection_uuid),
            principal,
        )
    ).first()
    if row is None:
        raise NotFound(f"No connection {connection_uuid}.", code="connection_not_found")
    return row[0], row[1]


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
    session: Session,
    principal: Principal,
    connection_uuid: uuid.UUID,
    payload: ConnectionUpdate,
    box: SecretBox,
    *,
    policy: OutboundPolicy | None = None,
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
            policy=policy or OutboundPolicy.from_environment(),
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
    values = connection_values(connection, box)
    return SkillContext(
        values=values,
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


# --- catalog views for the console ------------------------------------------------------------------------------


def search_integrations(query: str | None) -> list[Integration]:
    """Integrations whose name, id or one of whose skill names contains every word of ``query``."""
    words = (query or "").lower().split()
    if not words:
        return all_integrations()

    def haystack(integration: Integration) -> str:
        skills = (f"{s.name} {s.id}" for s in integration.skills)
        return " ".join([integration.name, integration.id, *skills]).lower()

    return [i for i in all_integrations() if all(word in haystack(i) for word in words)]


def matching_skill_names(integration: Integration, query: str | None) -> list[str]:
    """The display names of the skills whose name or id contains a word of ``query`` (why a search found the
    integration)."""
    words = (query or "").lower().split()
    return [s.name for s in integration.skills if words and any(word in f"{s.name} {s.id}".lower() for word in words)]


def connection_counts(session: Session, principal: Principal) -> dict[str, int]:
    """Connections per integration id in the organizations the principal may see."""
    query = scoped(select(Connection.integration_id, func.count()).group_by(Connection.integration_id), principal)
    return {row[0]: row[1] for row in session.execute(query)}


_FORMATS = {
    "date-time": "date-time",
    "date": "date",
    "time": "time",
    "duration": "duration",
    "email": "email",
    "uri": "URL",
    "uuid": "UUID",
    "ipvanyaddress": "IP address",
    "ipvanynetwork": "IP network",
    "ipvanyinterface": "IP interface",
    "ipv4": "IPv4 address",
    "ipv6": "IPv6 address",
}


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class _SchemaReader:
    """Turns one pydantic JSON schema into parameter tables: ``$ref``/``$defs`` resolved, nullable unwrapped,
    enums listed, and every object type it refers to collected so it can be shown as a table of its own."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema
        self.defs: Mapping[str, Any] = schema.get("$defs", {})
        self.referenced: list[str] = []

    def _target(self, node: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            return name, self.defs.get(name, {})
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            return self._target(all_of[0])
        return None, node

    def _options(self, node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        """The non-null alternatives of an anyOf/oneOf (a nullable field is its non-null type)."""
        options = node.get("anyOf") or node.get("oneOf") or []
        return [o for o in options if o.get("type") != "null"]

    @staticmethod
    def _is_object(node: Mapping[str, Any]) -> bool:
        return node.get("type") == "object" and isinstance(node.get("properties"), dict)

    def type_of(self, node: Mapping[str, Any]) -> str:
        name, target = self._target(node)
        if name is not None:
            if self._is_object(target):
                if name not in self.referenced:
                    self.referenced.append(name)
                return str(target.get("title") or name)
            return self.type_of(target)
        if "anyOf" in node or "oneOf" in node:
            labels = list(dict.fromkeys(self.type_of(option) for option in self._options(node)))
            return " or ".join(labels) or "null"
        kind = node.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None and "enum" in node:
            kind = "string" if all(isinstance(v, str) for v in node["enum"]) else "value"
        if kind is None and "const" in node:
            kind = "string" if isinstance(node["const"], str) else "value"
        if kind == "array":
            items = node.get("items")
            if not isinstance(items, dict) or not items:
                return "array"
            label = self.type_of(items)
            item_name, item_target = self._target(items)
            return f"{label}[]" if item_name is not None and self._is_object(item_target) else f"array of {label}"
        if kind == "object":
            values = node.get("additionalProperties")
            if isinstance(values, dict) and values:
                return f"object of {self.type_of(values)}"
            return "object"
        if kind == "string" and node.get("format"):
            return f"string ({_FORMATS.get(node['format'], node['format'])})"
        return str(kind) if kind else "any"

    def allowed(self, node: Mapping[str, Any]) -> list[str]:
        _name, target = self._target(node)
        if "enum" in target:
            return [_shown(v) for v in target["enum"]]
        if "const" in target:
            return [_shown(target["const"])]
        values: list[str] = []
        for option in self._options(target):
            values.extend(v for v in self.allowed(option) if v not in values)
        return values

    def notes(self, node: Mapping[str, Any]) -> list[str]:
        _name, target = self._target(node)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        for option in self._options(merged):
            merged = {**option, **merged}
        notes: list[str] = []
        low, high = merged.get("minimum", merged.get("exclusiveMinimum")), merged.get("maximum")
        if low is not None and high is not None:
            notes.append(f"{low} to {high}")
        elif low is not None:
            notes.append(f"at least {low}")
        elif high is not None:
            notes.append(f"at most {high}")
        short, long = merged.get("minLength"), merged.get("maxLength")
        if long is not None:
            notes.append(f"{short or 0} to {long} characters")
        elif short:
            notes.append(f"at least {short} character{'s' if short != 1 else ''}")
        if merged.get("minItems"):
            notes.append(f"at least {merged['minItems']} item{'s' if merged['minItems'] != 1 else ''}")
        if merged.get("maxItems") is not None:
            notes.append(f"at most {merged['maxItems']} items")
        if merged.get("pattern"):
            notes.append(f"pattern {merged['pattern']}")
        if "default" in node and node["default"] is not None:
            notes.append(f"default {_shown(node['default'])}")
        return notes

    def table(self, node: Mapping[str, Any], title: str) -> ParameterTable:
        required = set(node.get("required", []))
        rows = [
            SkillParameter(
                name=name,
                type=self.type_of(prop),
                required=name in required,
                description=str(prop.get("description") or self._target(prop)[1].get("description") or ""),
                allowed=self.allowed(prop),
                notes=self.notes(prop),
            )
            for name, prop in node.get("properties", {}).items()
        ]
        return ParameterTable(title=title, description=str(node.get("description") or ""), parameters=rows)

    def tables(self, title: str) -> tuple[ParameterTable, list[ParameterTable]]:
        """The schema's own table and, in order of first use, one per object type it refers to."""
        main = self.table(self.schema, title)
        nested: list[ParameterTable] = []
        done = 0
        while done < len(self.referenced):  # tables add the types they refer to; every type appears once
            name = self.referenced[done]
            target = self.defs[name]
            nested.append(self.table(target, str(target.get("title") or name)))
            done += 1
        return main, nested


@functools.cache
def skill_docs(integration_id: str) -> tuple[SkillDoc, ...]:
    """Each skill of an integration with its parameter tables, derived once from the declared JSON schemas."""
    entry = next(i for i in catalog_json() if i["id"] == get_integration(integration_id).id)
    docs = []
    for declared in entry["skills"]:
        inputs, input_types = _SchemaReader(declared["input_schema"]).tables("Inputs")
        outputs, output_types = _SchemaReader(declared["output_schema"]).tables("Outputs")
        docs.append(
            SkillDoc(
                id=declared["id"],
                name=declared["name"],
                purpose=declared["purpose"],
                permissions=declared["permissions"],
                writes=declared["writes"],
                inputs=inputs,
                input_types=input_types,
                outputs=outputs,
                output_types=output_types,
            )
        )
    return tuple(docs)
