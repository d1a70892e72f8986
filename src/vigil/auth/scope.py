"""The one choke point for tenant scoping: every read or write of a tenant-owned row starts here.

A service never filters by organization by hand. It builds its query and passes it through `scoped` (lists)
or `get_scoped` (one object by reference), which add the principal's organizations, so a forgotten filter
cannot exist. Another tenant's object then simply is not found: a 404 that says nothing about it. The one
403 is SPEC §2's: a restricted caller naming an organization outside its list by code (`organization_for`,
or a reference such as `BETA-OKTA-17` that carries the code) is refused whether or not the thing exists.
"""

from __future__ import annotations

import uuid
from typing import Any, TypeVar, TypeVarTuple

from sqlalchemy import Select, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from vigil.auth.schemas import Principal
from vigil.errors import NotFound
from vigil.orgs.models import Organization

T = TypeVar("T")
Ts = TypeVarTuple("Ts")

#: The column every tenant-owned table carries; `scoped` finds it on the query's first entity.
OWNER_COLUMN = "organization_uuid"


def scoped(
    query: Select[*Ts], principal: Principal, column: InstrumentedAttribute[uuid.UUID] | None = None
) -> Select[*Ts]:
    """`query` limited to the principal's organizations (unchanged for an all-organizations principal).

    The owner column is the first selected entity's `organization_uuid` unless `column` names another (a row
    owned through a join). It is resolved even when no filter is added, so a query on a table that is not
    tenant-owned fails for every caller, not only for restricted ones.
    """
    owner = column if column is not None else _owner_column(query)
    scope = principal.organization_scope
    return query if scope is None else query.where(owner.in_(sorted(scope)))


def get_scoped(
    session: Session,
    query: Select[T],
    principal: Principal,
    missing: NotFound,
    *,
    named_code: str | None = None,
) -> T:
    """The one row `query` selects among the principal's organizations, or `missing`.

    `named_code` is the organization code a human-readable reference carries (`BETA-17`): when nothing is
    found and that code is outside a restricted principal's list, the answer is SPEC §2's 403 instead, the
    same for an existing and a non-existent object, so sequential ids cannot be probed.
    """
    row = session.scalar(scoped(query, principal))
    if row is not None:
        return row
    if named_code and not principal.all_organizations:
        code = named_code.strip().upper()
        owner = session.scalar(select(Organization.organization_uuid).where(Organization.organization_code == code))
        if owner is None or not principal.can_access(owner):
            raise principal.forbidden(code)
    raise missing


def get_by_reference(
    session: Session,
    principal: Principal,
    entity: type[T],
    by_uuid: InstrumentedAttribute[uuid.UUID],
    by_id: InstrumentedAttribute[str],
    reference: str,
    missing: NotFound,
) -> T:
    """The object a reference names: its uuid, or its human-readable id (`BETA-OKTA-17`), whose organization
    code makes the answer SPEC §2's 403 for a restricted principal outside that organization (see `get_scoped`)."""
    named_code = None
    try:
        condition = by_uuid == uuid.UUID(reference)
    except ValueError:
        condition = by_id == reference.strip().upper()
        named_code = code_of(reference)
    return get_scoped(session, select(entity).where(condition), principal, missing, named_code=named_code)


def code_of(reference: str) -> str:
    """The organization code at the start of an `alert_id` or `case_id` (codes never contain '-')."""
    return reference.strip().split("-", 1)[0]


def _owner_column(query: Select[*tuple[Any, ...]]) -> InstrumentedAttribute[uuid.UUID]:
    entity = query.column_descriptions[0].get("entity") if query.column_descriptions else None
    owner = getattr(entity, OWNER_COLUMN, None)
    if not isinstance(owner, InstrumentedAttribute):
        raise TypeError(f"{entity!r} has no {OWNER_COLUMN}; name the owner column: scoped(query, principal, column=)")
    return owner
