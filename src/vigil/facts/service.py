"""Organization facts: validated per kind, never permanent, and only ever served to the analyst while active.

Every read and write starts from the organization the caller names (`organization_for`: a restricted key naming
another tenant gets 403) and then a scoped query, so another tenant's fact is simply not found. Every change is
an event with its actor and time. What the engine records before an analysis is `analysis_evidence`.
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from vigil.auth.schemas import Principal
from vigil.auth.scope import get_scoped, scoped
from vigil.core.entities import Entities
from vigil.db.base import epoch_now
from vigil.errors import Conflict, NotFound, ValidationFailed
from vigil.evidence.facts import NETWORK_KINDS, FactKind, OrgFact, OrgFacts
from vigil.facts.models import OrganizationFact, OrganizationFactEvent
from vigil.facts.schemas import FactCreate, FactEventOut, FactOut, FactStatus, FactUpdate
from vigil.input_types import has_control_characters
from vigil.orgs.models import Organization
from vigil.orgs.service import organization_for
from vigil.users.service import EMAIL_PATTERN

#: No permanent allow-list: a fact lives at most this long before someone must vouch for it again.
MAX_LIFETIME_SECONDS = 730 * 24 * 3600
#: A change window longer than this is an allow-list in disguise.
MAX_WINDOW_SECONDS = 31 * 24 * 3600
#: The broadest range a network fact may name (10.0.0.0/8 is an office network; 0.0.0.0/0 is not a fact).
MIN_PREFIX_LENGTH = {4: 8, 6: 32}
#: At most this many facts go into one investigation's evidence; those about the alert's entities first.
MAX_FACTS_IN_EVIDENCE = 200
ACCOUNT_KINDS = frozenset({FactKind.VIP_ACCOUNT, FactKind.SERVICE_ACCOUNT})


def _invalid(message: str, field: str, code: str, value: object = None) -> ValidationFailed:
    detail: dict[str, Any] = {"field": field}
    if value is not None:
        detail["value"] = value
    return ValidationFailed(message, code=code, details=[detail])


def _day(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d")


def clean_value(kind: FactKind, value: str) -> str:
    """The value as stored: a network kind's address or range in canonical form, any other kind's text trimmed."""
    text = value.strip()
    if not text or has_control_characters(text):
        raise _invalid("Enter the fact's value on one line.", "value", "invalid_fact_value")
    if kind in NETWORK_KINDS:
        return _network(text)
    if kind in ACCOUNT_KINDS and any(c.isspace() for c in text):
        raise _invalid(
            "An account is an e-mail address or a user name, without spaces.", "value", "invalid_fact_value", text
        )
    return text


def _network(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as error:
        raise _invalid(
            f"{text!r} is not an IP address or CIDR range ({error}).", "value", "invalid_fact_value", text
        ) from None
    if network.prefixlen < MIN_PREFIX_LENGTH[network.version]:
        broadest = MIN_PREFIX_LENGTH[network.version]
        raise _invalid(
            f"{text} is too broad for a fact: name a range of /{broadest} or narrower.",
            "value",
            "fact_range_too_broad",
            text,
        )
    return str(network.network_address) if network.num_addresses == 1 else str(network)


def _owner(owner: str) -> str:
    cleaned = owner.strip().lower()
    if not EMAIL_PATTERN.fullmatch(cleaned):
        raise _invalid("The owner is the e-mail of whoever vouches for the fact.", "owner", "invalid_owner", owner)
    return cleaned


def _text(value: str, field: str) -> str:
    cleaned = value.strip()
    if not cleaned:
        raise _invalid(f"Enter the fact's {field}.", field, f"invalid_{field}")
    return cleaned


def _check_expiry(expires_at: int, now: int, *, creating: bool) -> int:
    if creating and expires_at <= now:
        raise _invalid("A new fact must expire in the future.", "expires_at", "invalid_expiry", expires_at)
    if expires_at > now + MAX_LIFETIME_SECONDS:
        raise _invalid(
            f"A fact expires at most two years ahead (by {_day(now + MAX_LIFETIME_SECONDS)}); renew it then.",
            "expires_at",
            "invalid_expiry",
            expires_at,
        )
    return expires_at


def _check_window(kind: FactKind, start: int | None, end: int | None) -> None:
    if kind is not FactKind.CHANGE_WINDOW:
        if start is not None or end is not None:
            raise _invalid("Only a change window has a start and an end.", "window_start", "invalid_window")
        return
    if start is None or end is None:
        field = "window_start" if start is None else "window_end"
        raise _invalid("A change window needs its start and its end.", field, "invalid_window")
    if end <= start:
        raise _invalid("A change window ends after it starts.", "window_end", "invalid_window", end)
    if end - start > MAX_WINDOW_SECONDS:
        raise _invalid("A change window lasts at most 31 days.", "window_end", "invalid_window", end)


def status_of(fact: OrganizationFact, now: int) -> FactStatus:
    if fact.revoked_at is not None:
        return FactStatus.REVOKED
    return FactStatus.ACTIVE if fact.expires_at > now else FactStatus.EXPIRED


def describe(fact: OrganizationFact, organization_code: str, now: int | None = None) -> FactOut:
    return FactOut(
        fact_uuid=fact.fact_uuid,
        organization_code=organization_code,
        kind=FactKind(fact.kind),
        value=fact.value,
        scope=fact.scope,
        reason=fact.reason,
        owner=fact.owner,
        created_by=fact.created_by,
        created_at=fact.created_at,
        modified_at=fact.modified_at,
        expires_at=fact.expires_at,
        window_start=fact.window_start,
        window_end=fact.window_end,
        revoked_at=fact.revoked_at,
        status=status_of(fact, epoch_now() if now is None else now),
    )


def _record(session: Session, fact: OrganizationFact, actor: str, action: str, **change: str | None) -> None:
    session.add(
        OrganizationFactEvent(fact_uuid=fact.fact_uuid, at=epoch_now(), actor=actor[:320], action=action, **change)
    )


def create_fact(
    session: Session, principal: Principal, organization_code: str, payload: FactCreate, *, actor: str
) -> tuple[Organization, OrganizationFact]:
    organization = organization_for(session, principal, organization_code)
    now = epoch_now()
    kind = payload.kind
    _check_window(kind, payload.window_start, payload.window_end)
    fact = OrganizationFact(
        fact_uuid=uuid.uuid4(),
        organization_uuid=organization.organization_uuid,
        kind=kind.value,
        value=clean_value(kind, payload.value),
        scope=(payload.scope or "").strip() or None,
        reason=_text(payload.reason, "reason"),
        owner=_owner(payload.owner),
        created_by=actor[:320],
        created_at=now,
        modified_at=now,
        expires_at=_check_expiry(payload.expires_at, now, creating=True),
        window_start=payload.window_start,
        window_end=payload.window_end,
    )
    session.add(fact)
    session.flush()
    _record(session, fact, actor, "created", to_value=f"{kind.value} {fact.value}")
    return organization, fact


def get_fact(
    session: Session, principal: Principal, organization_code: str, fact_ref: str
) -> tuple[Organization, OrganizationFact]:
    """The organization's fact by uuid; another organization's fact is not found (404), as is a malformed id."""
    organization = organization_for(session, principal, organization_code)
    missing = NotFound(f"Organization {organization.organization_code} has no fact {fact_ref}.", code="fact_not_found")
    try:
        fact_uuid = uuid.UUID(fact_ref.strip())
    except ValueError:
        raise missing from None
    query = select(OrganizationFact).where(
        OrganizationFact.fact_uuid == fact_uuid, OrganizationFact.organization_uuid == organization.organization_uuid
    )
    return organization, get_scoped(session, query, principal, missing)


def find_fact(session: Session, principal: Principal, fact_ref: str) -> tuple[Organization, OrganizationFact]:
    """A fact by uuid alone (the CLI's `fact revoke ID`), among the principal's organizations."""
    missing = NotFound(f"No fact {fact_ref}.", code="fact_not_found")
    try:
        fact_uuid = uuid.UUID(fact_ref.strip())
    except ValueError:
        raise missing from None
    fact = get_scoped(
        session, select(OrganizationFact).where(OrganizationFact.fact_uuid == fact_uuid), principal, missing
    )
    organization = session.get(Organization, fact.organization_uuid)
    assert organization is not None  # the foreign key cascades
    return organization, fact


def list_facts(
    session: Session,
    principal: Principal,
    organization_code: str,
    *,
    kind: FactKind | None = None,
    active: bool | None = None,
) -> tuple[Organization, list[OrganizationFact]]:
    """The organization's facts by kind and value; `active` True: only those the analyst reads, False: the rest."""
    organization = organization_for(session, principal, organization_code)
    now = epoch_now()
    query = select(OrganizationFact).where(OrganizationFact.organization_uuid == organization.organization_uuid)
    if kind is not None:
        query = query.where(OrganizationFact.kind == kind.value)
    if active is True:
        query = query.where(OrganizationFact.revoked_at.is_(None), OrganizationFact.expires_at > now)
    elif active is False:
        query = query.where((OrganizationFact.revoked_at.is_not(None)) | (OrganizationFact.expires_at <= now))
    rows = session.scalars(scoped(query, principal).order_by(OrganizationFact.kind, OrganizationFact.value))
    return organization, list(rows)


def active_counts(session: Session, principal: Principal) -> dict[uuid.UUID, int]:
    """How many active facts each of the principal's organizations has (the console's index of facts)."""
    query = (
        select(OrganizationFact.organization_uuid, func.count())
        .where(OrganizationFact.revoked_at.is_(None), OrganizationFact.expires_at > epoch_now())
        .group_by(OrganizationFact.organization_uuid)
    )
    return {
        row[0]: int(row[1]) for row in session.execute(scoped(query, principal, OrganizationFact.organization_uuid))
    }


def update_fact(
    session: Session,
    principal: Principal,
    organization_code: str,
    fact_ref: str,
    changes: FactUpdate,
    *,
    actor: str,
) -> tuple[Organization, OrganizationFact]:
    """Change what was sent; each changed field is an event (from, to). A revoked fact stays as it was revoked."""
    organization, fact = get_fact(session, principal, organization_code, fact_ref)
    if fact.revoked_at is not None:
        raise Conflict(f"Fact {fact.fact_uuid} was revoked; record a new one instead.", code="fact_revoked")
    sent = changes.model_fields_set
    wanted: dict[str, Any] = {}
    for field in ("reason", "owner", "expires_at"):
        if field in sent and getattr(changes, field) is None:
            raise _invalid(f"The fact's {field} cannot be removed.", field, f"invalid_{field}")
    if "reason" in sent and changes.reason is not None:
        wanted["reason"] = _text(changes.reason, "reason")
    if "owner" in sent and changes.owner is not None:
        wanted["owner"] = _owner(changes.owner)
    if "scope" in sent:
        wanted["scope"] = (changes.scope or "").strip() or None
    if "expires_at" in sent and changes.expires_at is not None:
        wanted["expires_at"] = _check_expiry(changes.expires_at, epoch_now(), creating=False)
    if sent & {"window_start", "window_end"}:
        start = changes.window_start if "window_start" in sent else fact.window_start
        end = changes.window_end if "window_end" in sent else fact.window_end
        _check_window(FactKind(fact.kind), start, end)
        wanted |= {"window_start": start, "window_end": end}
    changed = False
    for field, value in wanted.items():
        before = getattr(fact, field)
        if before == value:
            continue
        setattr(fact, field, value)
        _record(session, fact, actor, "changed", field=field, from_value=_shown(before), to_value=_shown(value))
        changed = True
    if changed:
        fact.modified_at = epoch_now()
        session.flush()
    return organization, fact


def _shown(value: object) -> str | None:
    return None if value is None else str(value)


def revoke_fact(
    session: Session, principal: Principal, fact_ref: str, *, actor: str, organization_code: str | None = None
) -> tuple[Organization, OrganizationFact]:
    """Stop the fact counting now; revoking twice keeps the first revocation (so a retry is harmless)."""
    if organization_code is None:
        organization, fact = find_fact(session, principal, fact_ref)
    else:
        organization, fact = get_fact(session, principal, organization_code, fact_ref)
    if fact.revoked_at is None:
        fact.revoked_at = fact.modified_at = epoch_now()
        _record(session, fact, actor, "revoked")
        session.flush()
    return organization, fact


def fact_history(session: Session, fact: OrganizationFact) -> list[FactEventOut]:
    events = session.scalars(
        select(OrganizationFactEvent)
        .where(OrganizationFactEvent.fact_uuid == fact.fact_uuid)
        .order_by(OrganizationFactEvent.id)
    )
    return [FactEventOut.model_validate(event) for event in events]


# What the engine records before every analysis ------------------------------------------------------------------


def as_org_fact(fact: OrganizationFact) -> OrgFact:
    return OrgFact(
        id=str(fact.fact_uuid),
        kind=FactKind(fact.kind),
        value=fact.value,
        scope=fact.scope,
        reason=fact.reason,
        owner=fact.owner,
        created_by=fact.created_by,
        expires_at=fact.expires_at,
        window_start=fact.window_start,
        window_end=fact.window_end,
    )


def _about_entities(fact: OrgFact, ips: Iterable[str], accounts: set[str]) -> bool:
    """Whether the fact covers one of the alert's addresses or accounts (those go first when there are many)."""
    if fact.kind in NETWORK_KINDS:
        return any(OrgFacts((fact,)).covering_ip(ip) is not None for ip in ips)
    if fact.kind in ACCOUNT_KINDS:
        return fact.value.casefold() in accounts
    return False


def analysis_evidence(session: Session, organization_uuid: uuid.UUID, entities: Entities) -> dict[str, Any]:
    """The organization's active facts as the `vigil.organization_facts` evidence item, whatever the alert: at
    most `MAX_FACTS_IN_EVIDENCE`, those about the alert's addresses and accounts first when there are more."""
    now = epoch_now()
    rows = session.scalars(
        select(OrganizationFact)
        .where(
            OrganizationFact.organization_uuid == organization_uuid,
            OrganizationFact.revoked_at.is_(None),
            OrganizationFact.expires_at > now,
        )
        .order_by(OrganizationFact.kind, OrganizationFact.id)
    )
    facts = [as_org_fact(row) for row in rows]
    if len(facts) > MAX_FACTS_IN_EVIDENCE:
        accounts = {name.casefold() for name in (*entities.users, *entities.emails)}
        facts.sort(key=lambda fact: not _about_entities(fact, entities.ips, accounts))
    shown = facts[:MAX_FACTS_IN_EVIDENCE]
    return {"facts": [fact.as_output() for fact in shown], "as_of": now, "omitted": len(facts) - len(shown)}
