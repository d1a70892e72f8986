"""Values passed between the durable workflow's steps (JSON-serialisable, recorded by DBOS)."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import BaseModel, Field

from vigil.ai.schemas import Analysis, EvidenceStatus
from vigil.core.entities import Entities
from vigil.evidence.signals import AlertFacts
from vigil.playbooks.schemas import PlaybookDefinition


class InvestigationPlan(BaseModel):
    """Everything an attempt needs after preparation: the alert, its entities, the playbook version."""

    alert_uuid: uuid.UUID
    attempt: int
    facts: AlertFacts
    entities: Entities
    playbook_uuid: uuid.UUID
    playbook_name: str
    playbook_version: int
    definition: PlaybookDefinition
    #: Absent in plans recorded before organizations could choose their model; looked up then.
    organization_uuid: uuid.UUID | None = None

    def template_context(self) -> dict[str, Any]:
        return {"alert": self.facts.model_dump(), "entities": self.entities.model_dump()}


class StepRecord(BaseModel):
    """What one playbook step did; becomes an `InvestigationStep` row and an `Evidence` item."""

    position: int
    name: str
    kind: str
    skill_id: str | None = None
    connection_name: str | None = None
    status: EvidenceStatus
    inputs: dict[str, Any] = Field(default_factory=dict)
    output: dict[str, Any] | None = None
    error: str | None = None
    #: The failure's stable name (`insufficient_permissions`, `skill_timeout`, …) when `status` is error.
    error_code: str | None = None
    started_at: int
    duration_ms: int = 0
    fatal: bool = False
    transient: bool = False


class CheckpointAsk(BaseModel):
    """What asking a checkpoint's question led to: a wait (checkpoint set) or a final record (skipped, failed)."""

    record: StepRecord
    checkpoint_uuid: uuid.UUID | None = None
    waiting_workflow_id: str | None = None
    timeout_seconds: int = 0

    @property
    def waiting(self) -> bool:
        return self.checkpoint_uuid is not None


class Progress(BaseModel):
    """How far an investigation got, handed from the queued workflow to the one that waits at a checkpoint."""

    records: list[StepRecord] = Field(default_factory=list)
    analysis: Analysis | None = None
