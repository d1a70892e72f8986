"""Find-or-create playbooks per alert type, and versioned edits validated against the skill catalog."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from vigil.db.base import epoch_now
from vigil.errors import NotFound, ValidationFailed, field_errors
from vigil.playbooks.models import Playbook, PlaybookVersion
from vigil.playbooks.schemas import PlaybookDefinition, SkillStep


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


def find_or_create(
    session: Session,
    *,
    organization_uuid: uuid.UUID,
    organization_code: str,
    alert_provider: str,
    alert_type: str,
    draft: Callable[[], PlaybookDefinition],
    actor: str,
) -> PlaybookRef:
    """The playbook for this alert type; the first alert of a new type drafts it.

    Two concurrent first alerts race on the unique key: the loser's insert fails inside a savepoint
    and it reads the winner's playbook, so exactly one exists.
    """
    existing = _find(session, organization_uuid, alert_provider, alert_type)
    if existing is not None:
        return _current(session, existing, created=False)
    definition = draft()
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
                    note="Drafted by the AI investigator for the first alert of this type",
                )
            )
            session.flush()
    except IntegrityError:
        winner = _find(session, organization_uuid, alert_provider, alert_type)
        if winner is None:
            raise
        return _current(session, winner, created=False)
    return PlaybookRef(playbook.playbook_uuid, playbook.name, 1, definition, created=True)


def get_version(session: Session, playbook_uuid: uuid.UUID, version: int | None = None) -> PlaybookRef:
    playbook = session.get(Playbook, playbook_uuid)
    if playbook is None:
        raise NotFound(f"No playbook {playbook_uuid}.", code="playbook_not_found")
    return _current(session, playbook, created=False, version=version)


def save_new_version(
    session: Session,
    playbook_uuid: uuid.UUID,
    raw_definition: object,
    *,
    known_skills: set[str],
    actor: str,
    note: str = "",
) -> PlaybookRef:
    """Validate an edited playbook and store it as the next version; the next alert runs it."""
    try:
        definition = PlaybookDefinition.model_validate(raw_definition)
    except ValidationError as error:
        raise ValidationFailed(
            "The playbook is not valid.",
            code="invalid_playbook",
            details=field_errors(error.errors(include_url=False)),
        ) from error
    unknown = sorted(
        {step.skill for step in definition.steps if isinstance(step, SkillStep) and step.skill not in known_skills}
    )
    if unknown:
        raise ValidationFailed(
            f"Unknown skill(s): {', '.join(unknown)}.",
            code="unknown_skill",
            details=[{"field": "steps", "value": name} for name in unknown],
        )
    playbook = session.scalar(select(Playbook).where(Playbook.playbook_uuid == playbook_uuid).with_for_update())
    if playbook is None:
        raise NotFound(f"No playbook {playbook_uuid}.", code="playbook_not_found")
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


def list_playbooks(session: Session, organization_scope: frozenset[uuid.UUID] | None) -> list[Playbook]:
    query = select(Playbook).order_by(Playbook.organization_code, Playbook.name)
    if organization_scope is not None:
        query = query.where(Playbook.organization_uuid.in_(list(organization_scope)))
    return list(session.scalars(query))


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


def organization_of(session: Session, playbook_uuid: uuid.UUID) -> tuple[uuid.UUID, str]:
    """The owning organization's uuid and code (for tenant checks)."""
    row = session.execute(
        select(Playbook.organization_uuid, Playbook.organization_code).where(Playbook.playbook_uuid == playbook_uuid)
    ).first()
    if row is None:
        raise NotFound(f"No playbook {playbook_uuid}.", code="playbook_not_found")
    return row[0], row[1]
