"""Organization facts in the console: each organization's facts with their expiry and status, the add form (also
reached prefilled from a case the analyst closed differently from the AI) and revocation."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from pydantic import BaseModel

from vigil.console.deps import IdentityDep, WriterDep
from vigil.console.forms import form_error, see_other
from vigil.console.rendering import render
from vigil.errors import VigilError
from vigil.evidence.facts import FactKind
from vigil.facts import service as facts_service
from vigil.facts.schemas import MAX_REASON_LENGTH, MAX_SCOPE_LENGTH, MAX_VALUE_LENGTH, FactCreate, FactStatus
from vigil.orgs import service as orgs_service
from vigil.users.schemas import ConsoleIdentity
from vigil.web.deps import DbDep

router = APIRouter()

#: A new fact's expiry unless the analyst picks another: long enough to matter, short enough to be re-checked.
DEFAULT_EXPIRY_DAYS = 90


class FactForm(BaseModel):
    """The add form's fields as typed; `case` is the case the fact explains, when the form came from one."""

    kind: str = ""
    value: str = ""
    scope: str = ""
    reason: str = ""
    owner: str = ""
    expires: str = ""
    window_start: str = ""
    window_end: str = ""
    case: str = ""


@router.get("/facts")
def facts_index(request: Request, identity: IdentityDep, db: DbDep) -> Response:
    """Every organization the user may see with its active facts; a user of one organization goes straight there."""
    principal = identity.principal
    with db.read() as session:
        organizations = orgs_service.list_organizations(session, principal)
        counts = facts_service.active_counts(session, principal)
    if len(organizations) == 1:
        return see_other(f"/facts/{organizations[0].organization_code}")
    rows = [(o.organization_code, o.name, counts.get(o.organization_uuid, 0)) for o in organizations]
    return render(request, "facts/index.html", {"organizations": rows})


def _organization_page(
    request: Request,
    identity: ConsoleIdentity,
    db: DbDep,
    code: str,
    *,
    form: FactForm | None = None,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    params = request.query_params
    if form is None:
        expires = datetime.now(UTC).date() + timedelta(days=DEFAULT_EXPIRY_DAYS)
        form = FactForm(
            kind=params.get("kind", ""),
            value=params.get("value", ""),
            reason=params.get("reason", ""),
            scope=params.get("scope", ""),
            case=params.get("case", ""),
            owner=identity.email,
            expires=expires.isoformat(),
        )
    with db.read() as session:
        organization, facts = facts_service.list_facts(session, identity.principal, code)
        described = [facts_service.describe(fact, organization.organization_code) for fact in facts]
    described.sort(key=lambda fact: fact.status is not FactStatus.ACTIVE)  # active first, then the record
    context = {
        "organization": organization,
        "facts": described,
        "form": form,
        "kinds": list(FactKind),
        "added": params.get("added"),
        "revoked": params.get("revoked"),
        "prefilled": bool(params.get("kind") or params.get("value")),
        "max_value_length": MAX_VALUE_LENGTH,
        "max_scope_length": MAX_SCOPE_LENGTH,
        "max_reason_length": MAX_REASON_LENGTH,
        **extra,
    }
    return render(request, "facts/organization.html", context, status_code=status_code)


@router.get("/facts/{code}")
def organization_facts(request: Request, identity: IdentityDep, db: DbDep, code: str) -> Response:
    return _organization_page(request, identity, db, code)


@router.post("/facts/{code}")
def add_fact(
    request: Request, identity: WriterDep, db: DbDep, code: str, form: Annotated[FactForm, Form()]
) -> Response:
    """The form's dates are read as UTC (`expires` a day, the window's ends date and time)."""
    fields = form.model_dump(exclude={"case", "expires"}) | {"expires_at": form.expires}
    try:
        payload = FactCreate.from_fields(fields)
        with db.write() as session:
            organization, fact = facts_service.create_fact(
                session, identity.principal, code, payload, actor=identity.principal.actor
            )
            target = f"/facts/{organization.organization_code}?added={fact.fact_uuid}"
    except VigilError as error:
        return _organization_page(request, identity, db, code, form=form, **form_error(error))
    return see_other(target + (f"&case={form.case}" if form.case else ""))


@router.post("/facts/{code}/{fact_uuid}/revoke")
def revoke_fact(identity: WriterDep, db: DbDep, code: str, fact_uuid: uuid.UUID) -> Response:
    """Idempotent: a second click keeps the first revocation."""
    with db.write() as session:
        organization, fact = facts_service.revoke_fact(
            session, identity.principal, str(fact_uuid), actor=identity.principal.actor, organization_code=code
        )
        target = f"/facts/{organization.organization_code}?revoked={fact.fact_uuid}"
    return see_other(target)
