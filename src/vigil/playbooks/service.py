"""Find-or-create playbooks per alert type, and versioned edits validated against the skill catalog."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ValidationError
from sqlalchemy import and_, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from vigil.alerts.constants import MAX_ALERT_TYPE_LENGTH
from vigil.alerts.models import Alert
from vigil.auth.schemas import Principal
from vigil.auth.scope import get_scoped, scoped
from vigil.db.base import epoch_now
from vigil.errors import Conflict, NotFound, ValidationFailed, field_errors
from vigil.playbooks.models import Playbook, PlaybookAlertType, PlaybookVersion
from vigil.playbooks.schemas import PlaybookDefinition, SkillStep
from vigil.playbooks.validation import step_problems


@dataclass(frozen=True)
class PlaybookRef:
    playbook_uuid: uuid.UUID
    name: str
    version: int
    definition: PlaybookDefinition
    created: bool


def playbook_name(organization_code: str, provider: str, alert_type: str, on: datetime) -> str:
    """The seed's naming: `<org> <provider> - <alert_type> - AI Generated <YYYY-MM-DD>`."""
    return f"{organization_code} {provider} - {alert_type} - AI Generated {on.strftime('%Y-%m-%d')}"


def find_existing(
    session: Session, organization_uuid: uuid.UUID, alert_provider: str, alert_type: str
) -> PlaybookRef | None:
    """The playbook serving this alert type at its current version: the one it is mapped to, else its own."""
    serving = serving_playbooks(session, {organization_uuid}, {alert_type}).get(
        (organization_uuid, alert_provider, alert_type)
    )
    existing = None if serving is None else session.get(Playbook, serving)
    return None if existing is None else _current(session, existing, created=False)


def find_or_create(
    session: Session,
    *,
    organization_uuid: uuid.UUID,
    organization_code: str,
    alert_provider: str,
    alert_type: str,
    definition: PlaybookDefinition | None,
    actor: str,
    note: str = "Drafted for the first alert of this type",
) -> PlaybookRef | None:
    """The playbook for this alert type; the first alert of a new type stores `definition` (drafted before this
    transaction began, so no model ever thinks while a write lock is held).

    None when there is no playbook and nothing was drafted (one was deleted after the caller looked).
    Two concurrent first alerts race on the unique key: the loser's insert fails inside a savepoint
    and it reads the winner's playbook, so exactly one exists.
    """
    existing = find_existing(session, organization_uuid, alert_provider, alert_type)
    if existing is not None or definition is None:
        return existing
    now = epoch_now()
    playbook = Playbook(
        playbook_uuid=uuid.uuid4(),
        organization_uuid=organization_uuid,
        organization_code=organization_code,
        alert_provider=alert_provider,
        alert_type=alert_type,
        name=playbook_name(organization_code, alert_provider, alert_type, datetime.fromtimestamp(now, UTC)),
        current_version=1,
        created_at=now,
        modified_at=now,
    )
    try:
        with session.begin_nested():
            session.add(playbook)
            session.flush()
            session.add(
                PlaybookVersion(
                    playbook_uuid=playbook.playbook_uuid,
                    version=1,
                    definition=definition.model_dump_json(),
                    created_at=now,
                    created_by=actor,
                    note=note[:1000],
                )
            )
            session.flush()
    except IntegrityError:
        winner = _find(session, organization_uuid, alert_provider, alert_type)
        if winner is None:
            raise
        return _current(session, winner, created=False)
    return PlaybookRef(playbook.playbook_uuid, playbook.name, 1, definition, created=True)


def get_version(
    session: Session, principal: Principal, playbook_uuid: uuid.UUID, version: int | None = None
) -> PlaybookRef:
    """A playbook's current (or given) version, if it belongs to one of the principal's organizations."""
    return _current(session, get_playbook(session, principal, playbook_uuid), created=False, version=version)


def save_new_version(
    session: Session,
    principal: Principal,
    playbook_uuid: uuid.UUID,
    raw_definition: object,
    *,
    skill_inputs: Mapping[str, type[BaseModel]],
    actor: str,
    note: str = "",
    expected_version: int | None = None,
) -> PlaybookRef:
    """Validate an edited playbook and store it as the next version; the next alert runs it.

    Every problem names its step (`steps.<index>.<field>`), so an editor can show it beside that step.
    `skill_inputs` (skill id → input model) is the catalog: unknown skills, input names a skill does not take and
    missing required inputs are refused; `expected_version`
    (the version the editor started from) turns a concurrent save or a double submit into a 409.
    """
    try:
        definition = PlaybookDefinition.model_validate(raw_definition)
    except ValidationError as error:
        raise ValidationFailed(
            "The playbook is not valid.",
            code="invalid_playbook",
            details=field_errors(error.errors(include_url=False)),
        ) from error
    unknown = [
        (index, step.skill)
        for index, step in enumerate(definition.steps)
        if isinstance(step, SkillStep) and step.skill not in skill_inputs
    ]
    if unknown:
        raise ValidationFailed(
            f"Unknown skill(s): {', '.join(sorted({name for _, name in unknown}))}.",
            code="unknown_skill",
            details=[
                {"field": f"steps.{index}.skill", "value": name, "message": f"No skill {name!r} in the catalog."}
                for index, name in unknown
            ],
        )
    problems = step_problems(definition, skill_inputs)
    if problems:
        raise ValidationFailed(
            f"The playbook has {len(problems)} problem(s) in its step inputs.",
            code="invalid_step_inputs",
            details=problems,
        )
    locked = select(Playbook).where(Playbook.playbook_uuid == playbook_uuid).with_for_update()
    playbook = get_scoped(session, locked, principal, _not_found(playbook_uuid))
    if expected_version is not None and playbook.current_version != expected_version:
        raise Conflict(
            f"Version {playbook.current_version} was saved after the version {expected_version} you edited.",
            code="playbook_changed",
            details=[{"field": "version", "value": playbook.current_version}],
        )
    playbook.current_version += 1
    playbook.modified_at = epoch_now()
    session.add(
        PlaybookVersion(
            playbook_uuid=playbook_uuid,
            version=playbook.current_version,
            definition=definition.model_dump_json(),
            created_at=playbook.modified_at,
            created_by=actor,
            note=note,
        )
    )
    session.flush()
    return PlaybookRef(playbook_uuid, playbook.name, playbook.current_version, definition, created=False)


@dataclass(frozen=True)
class PlaybookSummary:
    playbook: Playbook
    step_count: int


def list_playbook_summaries(
    session: Session,
    principal: Principal,
    *,
    organization_code: str | None = None,
    provider: str | None = None,
    q: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[list[PlaybookSummary], int]:
    """One page of playbooks with their current version's step count, and how many match in total."""
    query = scoped(select(Playbook), principal)
    if organization_code:
        query = query.where(Playbook.organization_code == organization_code.strip().upper())
    if provider:
        query = query.where(Playbook.alert_provider == provider.strip().lower())
    if q and q.strip():
        escaped = q.strip().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped}%"
        query = query.where(
            or_(Playbook.name.ilike(pattern, escape="\\"), Playbook.alert_type.ilike(pattern, escape="\\"))
        )
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(
        query.add_columns(PlaybookVersion.definition)
        .join(
            PlaybookVersion,
            and_(
                PlaybookVersion.playbook_uuid == Playbook.playbook_uuid,
                PlaybookVersion.version == Playbook.current_version,
            ),
        )
        .order_by(Playbook.organization_code, Playbook.name)
        .limit(limit)
        .offset(offset)
    )
    summaries = [
        PlaybookSummary(playbook=row[0], step_count=len(PlaybookDefinition.model_validate_json(row[1]).steps))
        for row in rows
    ]
    return summaries, total


def get_playbook(session: Session, principal: Principal, playbook_uuid: uuid.UUID) -> Playbook:
    """Another tenant's playbook is not found, exactly like a missing one."""
    query = select(Playbook).where(Playbook.playbook_uuid == playbook_uuid)
    return get_scoped(session, query, principal, _not_found(playbook_uuid))


def _not_found(playbook_uuid: uuid.UUID) -> NotFound:
    return NotFound(f"No playbook {playbook_uuid}.", code="playbook_not_found")


def list_versions(session: Session, playbook: Playbook) -> list[PlaybookVersion]:
    """Every saved version of a playbook already fetched in scope, newest first (who saved it, when, the note)."""
    return list(
        session.scalars(
            select(PlaybookVersion)
            .where(PlaybookVersion.playbook_uuid == playbook.playbook_uuid)
            .order_by(PlaybookVersion.version.desc())
        )
    )


def list_playbooks(session: Session, principal: Principal) -> list[Playbook]:
    query = select(Playbook).order_by(Playbook.organization_code, Playbook.name)
    return list(session.scalars(scoped(query, principal)))


def mapped_alert_types(session: Session, playbook: Playbook) -> list[str]:
    """The other alert types a playbook already fetched in scope serves, besides its own."""
    query = select(PlaybookAlertType.alert_type).where(PlaybookAlertType.playbook_uuid == playbook.playbook_uuid)
    return list(session.scalars(query.order_by(PlaybookAlertType.alert_type)))


def serving_playbooks(
    session: Session, organization_uuids: Collection[uuid.UUID], alert_types: Collection[str]
) -> dict[tuple[uuid.UUID, str, str], uuid.UUID]:
    """(organization, provider, alert type) → the playbook serving it now, a mapping first (as `find_existing`)."""
    own = select(Playbook.organization_uuid, Playbook.alert_provider, Playbook.alert_type, Playbook.playbook_uuid)
    mapped = select(
        PlaybookAlertType.organization_uuid,
        PlaybookAlertType.alert_provider,
        PlaybookAlertType.alert_type,
        PlaybookAlertType.playbook_uuid,
    )
    serving: dict[tuple[uuid.UUID, str, str], uuid.UUID] = {}
    for query, model in ((own, Playbook), (mapped, PlaybookAlertType)):
        rows = session.execute(
            query.where(model.organization_uuid.in_(set(organization_uuids)), model.alert_type.in_(set(alert_types)))
        )
        serving.update({(org, provider, kind): playbook for org, provider, kind, playbook in rows})
    return serving


def set_mapped_alert_types(
    session: Session, principal: Principal, playbook_uuid: uuid.UUID, alert_types: Collection[str], *, actor: str
) -> list[str]:
    """Make the playbook serve exactly these other types of its organization and provider; the next alert of an
    added type runs it, and a removed type goes back to its own playbook (drafted if it has none).

    The organization and provider are the playbook's, so no type of another tenant or provider can be mapped.
    A type served by a different playbook is a 409 (unmap it there first), the playbook's own type a 422.
    """
    locked = select(Playbook).where(Playbook.playbook_uuid == playbook_uuid).with_for_update()
    playbook = get_scoped(session, locked, principal, _not_found(playbook_uuid))
    wanted = {alert_type.strip() for alert_type in alert_types}
    problems = [t for t in sorted(wanted) if not 1 <= len(t) <= MAX_ALERT_TYPE_LENGTH or t == playbook.alert_type]
    if problems:
        raise ValidationFailed(
            f"A playbook can serve other alert types of 1 to {MAX_ALERT_TYPE_LENGTH} characters, not its own.",
            code="invalid_alert_type",
            details=[{"field": "alert_types", "value": t[:MAX_ALERT_TYPE_LENGTH]} for t in problems],
        )
    rows = session.scalars(
        select(PlaybookAlertType).where(
            PlaybookAlertType.organization_uuid == playbook.organization_uuid,
            PlaybookAlertType.alert_provider == playbook.alert_provider,
            PlaybookAlertType.alert_type.in_(wanted | set(mapped_alert_types(session, playbook))),
        )
    ).all()
    elsewhere = sorted(r.alert_type for r in rows if r.playbook_uuid != playbook_uuid)
    if elsewhere:
        raise Conflict(
            f"Already served by another playbook: {', '.join(elsewhere)}. Remove it there first.",
            code="alert_type_mapped",
            details=[{"field": "alert_types", "value": t} for t in elsewhere],
        )
    current = {r.alert_type: r for r in rows}
    for alert_type in set(current) - wanted:
        session.delete(current[alert_type])
    now = epoch_now()
    try:
        with session.begin_nested():
            session.add_all(
                PlaybookAlertType(
                    organization_uuid=playbook.organization_uuid,
                    alert_provider=playbook.alert_provider,
                    alert_type=alert_type,
                    playbook_uuid=playbook_uuid,
                    created_at=now,
                    created_by=actor[:200],
                )
                for alert_type in sorted(wanted - set(current))
            )
            session.flush()
    except IntegrityError as error:
        raise Conflict("Another change mapped one of these alert types meanwhile.", code="alert_type_mapped") from error
    return sorted(wanted)


def _find(session: Session, organization_uuid: uuid.UUID, provider: str, alert_type: str) -> Playbook | None:
    return session.scalar(
        select(Playbook).where(
            Playbook.organization_uuid == organization_uuid,
            Playbook.alert_provider == provider,
            Playbook.alert_type == alert_type,
        )
    )


def _current(session: Session, playbook: Playbook, *, created: bool, version: int | None = None) -> PlaybookRef:
    wanted = version or playbook.current_version
    row = session.scalar(
        select(PlaybookVersion).where(
            PlaybookVersion.playbook_uuid == playbook.playbook_uuid, PlaybookVersion.version == wanted
        )
    )
    if row is None:
        raise NotFound(f"Playbook {playbook.name} has no version {wanted}.", code="playbook_version_not_found")
    definition = PlaybookDefinition.model_validate_json(row.definition)
    return PlaybookRef(playbook.playbook_uuid, playbook.name, wanted, definition, created)


def investigator_links(session: Session, alerts: Sequence[Alert]) -> dict[uuid.UUID, uuid.UUID]:
    """alert_uuid → playbook_uuid of the investigator playbook serving the alert's type (its own or a shared one)."""
    typed = [a for a in alerts if a.alert_type is not None and a.investigator is not None]
    if not typed:
        return {}
    by_key = serving_playbooks(session, {a.organization_uuid for a in typed}, {a.alert_type or "" for a in typed})
    links: dict[uuid.UUID, uuid.UUID] = {}
    for alert in typed:
        playbook_uuid = by_key.get((alert.organization_uuid, alert.alert_provider, alert.alert_type or ""))
        if playbook_uuid is not None:
            links[alert.alert_uuid] = playbook_uuid
    return links


def known_alert_types(session: Session, principal: Principal, limit: int = 500) -> list[str]:
    """Alert types that have an investigator in the principal's organizations (suggestions for a filter)."""
    query = select(Playbook.alert_type).distinct().order_by(Playbook.alert_type).limit(limit)
    return list(session.scalars(scoped(query, principal)))
