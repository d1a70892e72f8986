"""Typed inputs and outputs of the investigator: what any model (rule-based or LLM) sees and must return."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vigil.evidence.knowledge import Category
from vigil.evidence.signals import StepOutput
from vigil.integrations.catalog import SkillRef


class Verdict(StrEnum):
    MALICIOUS = "malicious"
    SUSPICIOUS = "suspicious"
    BENIGN = "benign"
    INCONCLUSIVE = "inconclusive"


class Severity(StrEnum):
    """Case severity, lowest first (the order is used for comparisons)."""

    INFORMATIONAL = "informational"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    CRITICAL = "critical"


class Disposition(StrEnum):
    PENDING = "pending"
    TRUE_POSITIVE = "true_positive"
    BENIGN_TRUE_POSITIVE = "benign_true_positive"
    FALSE_POSITIVE = "false_positive"


class EvidenceKind(StrEnum):
    SKILL = "skill"
    CHECKPOINT = "checkpoint"


class EvidenceStatus(StrEnum):
    OK = "ok"
    ERROR = "error"
    SKIPPED = "skipped"
    WAITING = "waiting"  # a checkpoint step while the person has not answered yet (never analysed)


class CheckpointAnswer(StrEnum):
    """The ``answer`` a checkpoint step records in its evidence output."""

    CONFIRMED = "confirmed"
    DENIED = "denied"
    TIMEOUT = "timeout"


class AvailableSkill(BaseModel):
    """A skill the organization can run now (its integration is connected)."""

    model_config = ConfigDict(frozen=True)

    skill_id: str
    integration_id: str
    writes: bool = False
    purpose: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict, description="JSON schema of the skill's inputs.")


class Evidence(BaseModel):
    """What one executed playbook step produced; the analysis reads nothing else."""

    model_config = ConfigDict(frozen=True)

    step_name: str
    kind: EvidenceKind
    skill_id: SkillRef | None = None
    status: EvidenceStatus
    output: dict[str, Any] | None = None
    error: str | None = None

    def step(self) -> StepOutput:
        """This step as evidence readers see it."""
        return StepOutput(self.step_name, self.skill_id, self.output)


class Citation(BaseModel):
    """One piece of evidence the verdict rests on: where it came from, what it said, and how it counted."""

    model_config = ConfigDict(frozen=True)

    rule: str = Field(description="Id of the analyst rule that read it (docs/analyst.md), e.g. `H1`.")
    source: str = Field(description="The step that produced it (step name), or `alert` for the alert itself.")
    skill_id: str | None = Field(default=None, description="The skill the step ran, when it was a skill.")
    locator: str = Field(description="Where in that output: a record and field, e.g. `Results[2].ProcessCommandLine`.")
    quote: str = Field(description="The evidence itself, quoted (shortened to 300 characters).")
    finding: str = Field(description="What the rule concluded from it, as the findings list shows it.")
    points: float = Field(description="Signed weight: positive argues malicious, negative benign or wrong detection.")


class Analysis(BaseModel):
    """The investigator's conclusion; becomes the case's verdict, severity and proposed disposition."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    severity: Severity
    disposition: Disposition
    confidence: float = Field(ge=0.0, le=1.0)
    summary: str
    key_findings: list[str] = []
    recommended_actions: list[str] = []
    category: Category
    citations: list[Citation] = []
    decisive_entities: list[str] = Field(
        default=[], description="The users, hosts, addresses, hashes or domains the verdict turned on."
    )
    model: str = Field(default="builtin", description="Who wrote it: `builtin` or the model string.")
    fallback_reason: str | None = Field(
        default=None, description="Why the built-in analyst finished the investigation instead of the model."
    )
