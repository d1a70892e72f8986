"""Migration 0018 rewrites the skills of stored playbooks (and of recorded steps) from display names to
namespaced ids, and its downgrade writes the display names back. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from tests.ops.test_chat_migration import _migrate
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.db.session import create_db_engine
from vigil.playbooks.models import PlaybookVersion
from vigil.playbooks.schemas import AnalyzeStep, PlaybookDefinition
from vigil.settings import Settings

LEGACY_STEPS: list[dict[str, Any]] = [
    {"kind": "skill", "name": "Related", "skill": "Look up related alerts", "inputs": {}},
    {"kind": "skill", "name": "Hosts", "skill": "List Machines", "inputs": {"hostname": "{{ entities.hosts[0] }}"}},
    {"kind": "skill", "name": "Ask", "skill": "Chat Checkpoint", "inputs": {"user_email": "a@b.example"}},
    {"kind": "skill", "name": "Gone", "skill": "Retired Skill", "inputs": {}},
    {"kind": "analyze", "name": "AI analysis"},
]
NAMESPACED = ["vigil.related_alerts", "microsoft_defender.list_machines", "chat.checkpoint", "Retired Skill"]


def _stored(db_url: str) -> list[dict[str, Any]]:
    engine = create_db_engine(Settings(database_url=db_url))
    try:
        with engine.connect() as connection:
            text = connection.execute(sa.select(PlaybookVersion.definition)).scalar_one()
    finally:
        engine.dispose()
    steps: list[dict[str, Any]] = json.loads(text)["steps"]
    return steps


def test_stored_playbook_skills_become_namespaced_ids_across_0018_and_back(harness: Harness, db_url: str) -> None:
    harness.add_org("ACME")
    install_playbook(
        harness.db, "ACME", "okta", "Suspicious sign-in", PlaybookDefinition(steps=[AnalyzeStep(name="A")])
    )
    harness.db.dispose()

    _migrate(db_url, "0017", down=True)
    engine = create_db_engine(Settings(database_url=db_url))
    with engine.begin() as connection:  # as the code before 0018 stored it: compact JSON, display names
        legacy = json.dumps({"steps": LEGACY_STEPS}, separators=(",", ":"))
        connection.execute(sa.update(PlaybookVersion.__table__).values(definition=legacy))
    engine.dispose()

    _migrate(db_url, "heads")
    upgraded = _stored(db_url)
    assert [step.get("skill") for step in upgraded[:4]] == NAMESPACED  # an unknown skill is left for the editor
    assert upgraded[1]["inputs"] == LEGACY_STEPS[1]["inputs"] and upgraded[4] == LEGACY_STEPS[4]
    assert PlaybookDefinition.model_validate({"steps": upgraded[:3] + upgraded[4:]}).steps[1].skill == NAMESPACED[1]

    _migrate(db_url, "0017", down=True)
    assert _stored(db_url) == LEGACY_STEPS
    _migrate(db_url, "heads")
