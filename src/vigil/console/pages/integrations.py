"""Integrations: catalog search, Connections tab (create/edit/delete/Authenticate) and Skills tab per integration.

Every form is generated from the integration's declared connection fields; secret values never reach the
browser (edits show ``••••last4`` and a blank secret keeps the stored one).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

import pydantic
from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData

from vigil.auth.schemas import Principal
from vigil.console.deps import IdentityDep, WriterDep
from vigil.console.errors import is_htmx
from vigil.console.rendering import render
from vigil.db.session import Database
from vigil.errors import NotFound, ValidationFailed, VigilError
from vigil.integrations import service
from vigil.integrations.catalog import get_integration
from vigil.integrations.errors import UnknownIntegrationError
from vigil.integrations.framework import ConnectionField, Endpoints, Integration
from vigil.integrations.http import OutboundClient
from vigil.integrations.policy import OutboundPolicy
from vigil.integrations.schemas import ConnectionCreate, ConnectionOut, ConnectionUpdate
from vigil.integrations.secrets import SecretBox
from vigil.orgs import service as orgs_service
from vigil.users.schemas import ConsoleIdentity
from vigil.web.deps import DbDep

router = APIRouter()

FormMode = Literal["create", "edit"]


# --- helpers ----------------------------------------------------------------------------------------------------


def _integration(integration_id: str) -> Integration:
    try:
        return get_integration(integration_id)
    except UnknownIntegrationError:
        raise NotFound(f"No integration '{integration_id}'.", code="integration_not_found") from None


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secret_box
    return box


def _policy(request: Request) -> OutboundPolicy:
    """The app's outbound-URL policy, so the form refuses what the API refuses."""
    outbound: OutboundClient = request.app.state.outbound
    return outbound.policy


def _base(integration: Integration) -> str:
    return f"/integrations/{integration.id}"


def _connection_path(integration: Integration, connection_uuid: uuid.UUID | str) -> str:
    return f"{_base(integration)}/connections/{connection_uuid}"


def _safe_next(target: str, fallback: str) -> str:
    """Only pages of this area, so a form's return address cannot send the browser elsewhere."""
    if target.startswith("/integrations/") and "//" not in target and "\\" not in target:
        return target
    return fallback


def _text(form: FormData, key: str) -> str:
    value = form.get(key)
    return value.strip() if isinstance(value, str) else ""


def _chooser(integration: Integration) -> ConnectionField | None:
    if integration.auth_method_field is None:
        return None
    return next(f for f in integration.fields if f.name == integration.auth_method_field)


def _value_fields(integration: Integration) -> list[ConnectionField]:
    """The fields the user types values into (the auth method chooser is rendered as a choice instead)."""
    return [f for f in integration.fields if f.name != integration.auth_method_field]


def _method_labels(integration: Integration) -> dict[str, str]:
    """Each auth method named by the fields only it uses, e.g. "Authentication Email + Global API Key"."""
    chooser = _chooser(integration)
    if chooser is None:
        return {}
    labels = {}
    for method in chooser.choices:
        own = [f.label for f in integration.fields if f.auth_methods and method in f.auth_methods]
        labels[method] = " + ".join(own) or method
    return labels


def _expiry_to_epoch(text: str) -> int | None:
    if not text:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ValidationFailed(
            "Expiry must be a date (YYYY-MM-DD).", code="invalid_expiry", details=[{"field": "expires_at"}]
        ) from None
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def _epoch_to_date(value: int | None) -> str:
    return datetime.fromtimestamp(value, tz=UTC).date().isoformat() if value is not None else ""


def _field_errors(error: VigilError) -> dict[str, str]:
    """The error's messages by form field ("fields.bot_token" → "bot_token"); unplaced ones under ""."""
    errors: dict[str, str] = {}
    for detail in error.details:
        name = str(detail.get("field") or "")
        name = name.removeprefix("fields.")
        message = str(detail.get("message") or error.message)
        if name == "organization_code" and error.status_code == 403:
            message = "You cannot create connections for this organization."
        errors.setdefault(name, message)
    if not errors:
        errors[""] = error.message
    return errors


def _pydantic_errors(error: pydantic.ValidationError) -> dict[str, str]:
    errors: dict[str, str] = {}
    for item in error.errors():
        location = [str(part) for part in item.get("loc", ())]
        name = location[-1] if location and location[0] == "fields" else (location[0] if location else "")
        errors.setdefault(name, str(item.get("msg", "Invalid value.")))
    return errors


def _form_problems(error: VigilError | pydantic.ValidationError) -> tuple[dict[str, str], int]:
    """Messages by form field and the status to answer with, for a connection form that did not save."""
    if isinstance(error, VigilError):
        return _field_errors(error), error.status_code
    return _pydantic_errors(error), 422


@dataclass
class ConnectionForm:
    """What the connection form shows: entered (or stored) non-secret values, masked secrets, and errors."""

    mode: FormMode
    action: str
    organization_code: str = ""
    name: str = ""
    description: str = ""
    expires: str = ""
    auth_method: str | None = None
    values: dict[str, str] = field(default_factory=dict)
    stored_secrets: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    secrets_entered: bool = False
    connection_uuid: uuid.UUID | None = None

    @property
    def error_summary(self) -> str | None:
        if not self.errors:
            return None
        if "" in self.errors:
            return self.errors[""]
        return "The connection was not saved; correct the fields marked below."


def _blank_form(integration: Integration, organization_code: str = "") -> ConnectionForm:
    chooser = _chooser(integration)
    return ConnectionForm(
        mode="create",
        action=f"{_base(integration)}/connections",
        organization_code=organization_code,
        auth_method=chooser.default if chooser else None,
        values={f.name: f.default for f in _value_fields(integration) if f.default is not None and not f.secret},
    )


def _edit_form(integration: Integration, out: ConnectionOut) -> ConnectionForm:
    secret_names = integration.secret_field_names()
    return ConnectionForm(
        mode="edit",
        action=f"{_connection_path(integration, out.connection_uuid)}/edit",
        organization_code=out.organization_code,
        name=out.name,
        description=out.description,
        expires=_epoch_to_date(out.expires_at),
        auth_method=out.auth_method,
        values={k: v for k, v in out.fields.items() if k not in secret_names},
        stored_secrets={k: v for k, v in out.fields.items() if k in secret_names},
        connection_uuid=out.connection_uuid,
    )


def _posted_form(integration: Integration, form: FormData, base: ConnectionForm) -> ConnectionForm:
    """The submitted form as it will be shown again on an error: secrets are never echoed back."""
    chooser = _chooser(integration)
    base.name = _text(form, "name")
    base.description = _text(form, "description")
    base.expires = _text(form, "expires")
    if base.mode == "create":
        base.organization_code = _text(form, "organization_code").upper()
    if chooser is not None:
        base.auth_method = _text(form, chooser.name) or chooser.default
    base.values = {f.name: _text(form, f"field.{f.name}") for f in _value_fields(integration) if not f.secret}
    base.secrets_entered = any(_text(form, f"field.{f.name}") for f in _value_fields(integration) if f.secret)
    return base


def _submitted_values(
    integration: Integration, form: FormData, auth_method: str | None, *, editing: bool
) -> dict[str, str]:
    """Values of the fields the chosen auth method uses. Creating: blanks are omitted (so required ones are
    reported missing). Editing: a blank plain value clears it, a blank secret keeps the stored one."""
    values: dict[str, str] = {}
    for f in _value_fields(integration):
        if not f.applies_to(auth_method):
            continue
        text = _text(form, f"field.{f.name}")
        if text or (editing and not f.secret):
            values[f.name] = text
    return values


@dataclass(frozen=True)
class Organizations:
    codes: list[str]
    names: dict[str, str]


def _organizations(db: Database, identity: ConsoleIdentity) -> Organizations:
    """The organizations the user may pick for a new connection (admins: every one)."""
    with db.read() as session:
        rows = orgs_service.list_organizations(session, identity.principal)
        return Organizations(
            codes=[o.organization_code for o in rows], names={o.organization_code: o.name for o in rows}
        )


def _list_context(
    db: Database, box: SecretBox, identity: ConsoleIdentity, integration: Integration, org: str | None
) -> dict[str, Any]:
    with db.read() as session:
        rows = service.list_connections(session, identity.principal, org, integration.id)
        return {"connections": [service.describe(c, code, box) for c, code in rows], "org_filter": org or ""}


def _integration_context(db: Database, identity: ConsoleIdentity, integration: Integration, tab: str) -> dict[str, Any]:
    organizations = _organizations(db, identity)
    with db.read() as session:
        connection_count = service.connection_counts(session, identity.principal).get(integration.id, 0)
    return {
        "integration": integration,
        "tab": tab,
        "connection_count": connection_count,
        "organizations": organizations,
        "can_create": identity.can_write and bool(organizations.codes),
        "base": _base(integration),
        "skill_count": len(integration.skills),
        "chooser": _chooser(integration),
        "value_fields": _value_fields(integration),
        "method_labels": _method_labels(integration),
        "is_chat": integration.chat is not None,
    }


def _render_connections(
    request: Request,
    db: Database,
    identity: ConsoleIdentity,
    integration: Integration,
    *,
    form: ConnectionForm | None = None,
    status_code: int = 200,
    org_filter: str = "",
) -> Response:
    context = _integration_context(db, identity, integration, "connections")
    org = org_filter if org_filter in context["organizations"].codes else None
    context |= {
        **_list_context(db, _box(request), identity, integration, org),
        "form": form,
        "flash": request.query_params.get("done", ""),
    }
    return render(request, "integrations/connections.html", context, status_code=status_code)


def _load(
    db: Database, box: SecretBox, identity: ConsoleIdentity, integration: Integration, connection_uuid: uuid.UUID
) -> ConnectionOut:
    with db.read() as session:
        connection, code = service.get_connection(session, identity.principal, connection_uuid)
        if connection.integration_id != integration.id:
            raise NotFound(f"No {integration.name} connection {connection_uuid}.", code="connection_not_found")
        return service.describe(connection, code, box)


# --- catalog ----------------------------------------------------------------------------------------------------


@router.get("/integrations")
def catalog(request: Request, identity: IdentityDep, db: DbDep, q: str = "") -> Response:
    query = q.strip()
    with db.read() as session:
        counts = service.connection_counts(session, identity.principal)
    cards = [
        {
            "integration": integration,
            "skills": len(integration.skills),
            "connections": counts.get(integration.id, 0),
            "matching_skills": service.matching_skill_names(integration, query),
        }
        for integration in service.search_integrations(query)
    ]
    context = {"cards": cards, "q": query}
    if is_htmx(request) and request.headers.get("hx-target") == "catalog":
        return render(request, "integrations/_catalog.html", context)
    return render(request, "integrations/catalog.html", context)


# --- connections tab --------------------------------------------------------------------------------------------


@router.get("/integrations/{integration_id}")
def connections_tab(request: Request, integration_id: str, identity: IdentityDep, db: DbDep, org: str = "") -> Response:
    integration = _integration(integration_id)
    return _render_connections(request, db, identity, integration, org_filter=org.strip().upper())


@router.get("/integrations/{integration_id}/connections/new")
def new_connection(request: Request, integration_id: str, identity: WriterDep, db: DbDep, org: str = "") -> Response:
    integration = _integration(integration_id)
    return _render_connections(request, db, identity, integration, form=_blank_form(integration, org.strip().upper()))


@router.post("/integrations/{integration_id}/connections")
async def create_connection(request: Request, integration_id: str, identity: WriterDep, db: DbDep) -> Response:
    integration = _integration(integration_id)
    form = await request.form()
    shown = _posted_form(integration, form, _blank_form(integration))
    box = _box(request)

    def save() -> uuid.UUID:
        if not shown.organization_code:
            raise ValidationFailed("Choose an organization.", details=[{"field": "organization_code"}])
        payload = ConnectionCreate(
            organization_code=shown.organization_code,
            integration_id=integration.id,
            name=shown.name,
            description=shown.description,
            auth_method=shown.auth_method if integration.auth_method_field else None,
            fields=_submitted_values(integration, form, shown.auth_method, editing=False),
            expires_at=_expiry_to_epoch(shown.expires),
        )
        with db.write() as session:
            return service.create_connection(
                session, identity.principal, payload, box, policy=_policy(request)
            ).connection_uuid

    return await _save_connection_form(request, db, identity, integration, shown, save, done="created")


@router.get("/integrations/{integration_id}/connections/{connection_uuid}")
def connection_detail(
    request: Request, integration_id: str, connection_uuid: uuid.UUID, identity: IdentityDep, db: DbDep
) -> Response:
    integration = _integration(integration_id)
    box = _box(request)
    out = _load(db, box, identity, integration, connection_uuid)
    context: dict[str, Any] = {
        **_integration_context(db, identity, integration, "connections"),
        "connection": out,
        "flash": request.query_params.get("done", ""),
    }
    if integration.setup is not None:
        with db.read() as session:
            context["setup"] = integration.setup(session, identity.principal, connection_uuid, str(request.base_url))
    return render(request, "integrations/connection.html", context)


@router.get("/integrations/{integration_id}/connections/{connection_uuid}/edit")
def edit_connection(
    request: Request, integration_id: str, connection_uuid: uuid.UUID, identity: WriterDep, db: DbDep
) -> Response:
    integration = _integration(integration_id)
    out = _load(db, _box(request), identity, integration, connection_uuid)
    return _render_connections(request, db, identity, integration, form=_edit_form(integration, out))


@router.post("/integrations/{integration_id}/connections/{connection_uuid}/edit")
async def update_connection(
    request: Request, integration_id: str, connection_uuid: uuid.UUID, identity: WriterDep, db: DbDep
) -> Response:
    integration = _integration(integration_id)
    box = _box(request)
    form = await request.form()
    stored = await run_in_threadpool(_load, db, box, identity, integration, connection_uuid)
    shown = _posted_form(integration, form, _edit_form(integration, stored))

    def save() -> uuid.UUID:
        changes: dict[str, Any] = {
            "name": shown.name,
            "description": shown.description,
            "fields": _submitted_values(integration, form, shown.auth_method, editing=True),
        }
        if integration.auth_method_field:
            changes["auth_method"] = shown.auth_method
        if shown.expires != _epoch_to_date(stored.expires_at):
            changes["expires_at"] = _expiry_to_epoch(shown.expires)  # None removes the expiry
        payload = ConnectionUpdate(**changes)
        with db.write() as session:
            service.update_connection(
                session, identity.principal, connection_uuid, payload, box, policy=_policy(request)
            )
        return connection_uuid

    return await _save_connection_form(request, db, identity, integration, shown, save, done="saved")


async def _save_connection_form(
    request: Request,
    db: Database,
    identity: ConsoleIdentity,
    integration: Integration,
    shown: ConnectionForm,
    save: Callable[[], uuid.UUID],
    *,
    done: str,
) -> Response:
    """Runs a connection form's ``save`` off the event loop: the connection's page once saved, else the form again
    with what was typed and each problem at its field."""
    try:
        saved = await run_in_threadpool(save)
    except (VigilError, pydantic.ValidationError) as error:
        shown.errors, status_code = _form_problems(error)
        return await run_in_threadpool(
            _render_connections, request, db, identity, integration, form=shown, status_code=status_code
        )
    return RedirectResponse(f"{_connection_path(integration, saved)}?done={done}", status_code=303)


@router.post("/integrations/{integration_id}/connections/{connection_uuid}/delete")
def delete_connection(
    integration_id: str, connection_uuid: uuid.UUID, request: Request, identity: WriterDep, db: DbDep
) -> Response:
    integration = _change_connection(request, db, identity, integration_id, connection_uuid, service.delete_connection)
    return RedirectResponse(f"{_base(integration)}?done=deleted", status_code=303)


@router.post("/integrations/{integration_id}/connections/{connection_uuid}/test")
async def authenticate_connection(
    request: Request, integration_id: str, connection_uuid: uuid.UUID, identity: WriterDep, db: DbDep
) -> Response:
    """Authenticate/Test against the vendor. HTMX gets the result fragment; a plain form returns to its page."""
    integration = _integration(integration_id)
    box = _box(request)
    await run_in_threadpool(_load, db, box, identity, integration, connection_uuid)
    endpoints: Endpoints = request.app.state.endpoints
    http: OutboundClient = request.app.state.outbound
    result = await service.run_connection_test(
        db, identity.principal, connection_uuid, box=box, endpoints=endpoints, http=http
    )
    if is_htmx(request):
        return render(request, "integrations/_test_result.html", {"result": result, "fresh": True})
    form = await request.form()
    target = _safe_next(_text(form, "next"), _connection_path(integration, connection_uuid))
    return RedirectResponse(target, status_code=303)


@router.post("/integrations/{integration_id}/connections/{connection_uuid}/webhook-token")
def rotate_webhook_token(
    request: Request, integration_id: str, connection_uuid: uuid.UUID, identity: WriterDep, db: DbDep
) -> Response:
    integration = _change_connection(
        request, db, identity, integration_id, connection_uuid, service.rotate_webhook_token
    )
    return RedirectResponse(f"{_connection_path(integration, connection_uuid)}?done=rotated", status_code=303)


def _change_connection(
    request: Request,
    db: Database,
    identity: ConsoleIdentity,
    integration_id: str,
    connection_uuid: uuid.UUID,
    change: Callable[[Session, Principal, uuid.UUID], object],
) -> Integration:
    """A one-button change to a connection the caller may see (404 otherwise), in one write transaction."""
    integration = _integration(integration_id)
    _load(db, _box(request), identity, integration, connection_uuid)
    with db.write() as session:
        change(session, identity.principal, connection_uuid)
    return integration


# --- skills tab -------------------------------------------------------------------------------------------------


@router.get("/integrations/{integration_id}/skills")
def skills_tab(request: Request, integration_id: str, identity: IdentityDep, db: DbDep) -> Response:
    integration = _integration(integration_id)
    context = {
        **_integration_context(db, identity, integration, "skills"),
        "skills": service.skill_docs(integration.id),
    }
    return render(request, "integrations/skills.html", context)
