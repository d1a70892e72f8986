"""Investigator playbooks over the API: list, read a version, save an edited version."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from vigil.input_types import PositiveInt32, Text
from vigil.investigations.steps import playbook_skill_inputs
from vigil.playbooks import service
from vigil.playbooks.schemas import PlaybookDefinition
from vigil.web.deps import DbDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi/playbooks", tags=["playbooks"], responses=ERROR_RESPONSES)


class PlaybookOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    playbook_uuid: uuid.UUID
    name: str
    organization_code: str
    alert_provider: str
    alert_type: str
    current_version: int
    created_at: int
    modified_at: int


class PlaybookDetail(BaseModel):
    playbook_uuid: uuid.UUID
    name: str
    version: int
    definition: PlaybookDefinition

    @classmethod
    def of(cls, ref: service.PlaybookRef) -> PlaybookDetail:
        return cls(playbook_uuid=ref.playbook_uuid, name=ref.name, version=ref.version, definition=ref.definition)


class PlaybookEdit(BaseModel):
    definition: dict[str, Any]
    note: Text = ""


@router.get("", summary="Investigator playbooks of the organizations this key may use")
def list_playbooks(db: DbDep, principal: PrincipalDep) -> list[PlaybookOut]:
    with db.read() as session:
        return [PlaybookOut.model_validate(p) for p in service.list_playbooks(session, principal)]


@router.get("/{playbook_uuid}", summary="A playbook's current (or ?version=) steps")
def get_playbook(
    playbook_uuid: uuid.UUID, db: DbDep, principal: PrincipalDep, version: PositiveInt32 | None = None
) -> PlaybookDetail:
    with db.read() as session:
        ref = service.get_version(session, principal, playbook_uuid, version)
        return PlaybookDetail(
            playbook_uuid=ref.playbook_uuid, name=ref.name, version=ref.version, definition=ref.definition
        )


@router.put("/{playbook_uuid}", summary="Save edited steps as a new version; the next alert of the type runs it")
def edit_playbook(playbook_uuid: uuid.UUID, edit: PlaybookEdit, db: DbDep, principal: PrincipalDep) -> PlaybookDetail:
    with db.write() as session:
        ref = service.save_new_version(
            session,
            principal,
            playbook_uuid,
            edit.definition,
            skill_inputs=playbook_skill_inputs(),
            actor=principal.actor,
            note=edit.note,
        )
        return PlaybookDetail(
            playbook_uuid=ref.playbook_uuid, name=ref.name, version=ref.version, definition=ref.definition
        )


class MappedAlertTypes(BaseModel):
    """Other alert types of the playbook's organization and provider that it serves besides its own."""

    alert_types: list[Text] = Field(
        max_length=200, description="Replaces the whole set; [] returns every type to its own playbook."
    )


@router.get("/{playbook_uuid}/alert-types", summary="Other alert types this playbook serves besides its own")
def get_alert_types(playbook_uuid: uuid.UUID, db: DbDep, principal: PrincipalDep) -> MappedAlertTypes:
    with db.read() as session:
        playbook = service.get_playbook(session, principal, playbook_uuid)
        return MappedAlertTypes(alert_types=service.mapped_alert_types(session, playbook))


@router.put(
    "/{playbook_uuid}/alert-types",
    summary="Let similar alert types of the same provider share this playbook; the next alert of each runs it",
)
def put_alert_types(
    playbook_uuid: uuid.UUID, mapped: MappedAlertTypes, db: DbDep, principal: PrincipalDep
) -> MappedAlertTypes:
    with db.write() as session:
        alert_types = service.set_mapped_alert_types(
            session, principal, playbook_uuid, mapped.alert_types, actor=principal.actor
        )
        return MappedAlertTypes(alert_types=alert_types)
