"""Case shapes for the API."""

from __future__ import annotations

import json
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vigil.cases.constants import CaseDisposition, CaseSeverity, CaseStatus


class CaseEventOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: int
    actor: str
    kind: str
    message: str


class CaseCommentOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    author: str
    body: str
    created_at: int


class EvidenceOut(BaseModel):
    """One recorded playbook step: what ran, with which inputs, what came back, how long it took."""

    model_config = ConfigDict(from_attributes=True)

    position: int
    name: str
    kind: str
    skill_id: str | None
    connection_name: str | None
    status: str
    inputs: dict[str, Any]
    output: dict[str, Any] | None
    error: str | None
    started_at: int
    duration_ms: int

    @field_validator("inputs", "output", mode="before")
    @classmethod
    def _parse_json(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value


class CaseOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    case_id: str
    case_uuid: uuid.UUID
    organization_code: str
    alert_id: str
    alert_uuid: uuid.UUID
    playbook_uuid: uuid.UUID | None
    playbook_version: int | None
    title: str
    status: CaseStatus
    severity: CaseSeverity
    verdict: str
    category: str
    disposition: CaseDisposition
    ai_disposition: CaseDisposition
    ai_confidence: float = Field(ge=0, le=1)
    summary: str
    findings: list[str]
    recommended_actions: list[str]
    assignee: str | None
    created_at: int
    modified_at: int
    closed_at: int | None

    @field_validator("findings", "recommended_actions", mode="before")
    @classmethod
    def _parse_list(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value


class CaseDetail(CaseOut):
    evidence: list[EvidenceOut]
    timeline: list[CaseEventOut]
    comments: list[CaseCommentOut]


class CasePage(BaseModel):
    cases: list[CaseOut]
    next_cursor: str | None
