"""Investigator playbooks over the API: list, read a version, save an edited version."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

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
