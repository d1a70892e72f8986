"""The structured answers a model must give, and how each becomes Vigil's own (validated) types."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vigil.ai.schemas import Analysis, AvailableSkill, Citation, Disposition, Evidence, Severity, Verdict
from vigil.evidence.knowledge import Category
from vigil.integrations.catalog import canonical_skill_id
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, OnError, PlaybookDefinition, PlaybookStep, SkillStep
from vigil.playbooks.validation import step_problems

MAX_DRAFT_STEPS = 8
ANALYZE_STEP_NAME = "AI analysis"
LLM_RULE = "LLM"


class DraftedStep(BaseModel):
    """One step as the model writes it; `skill` names a catalog skill id exactly."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["skill", "checkpoint"]
    name: str = Field(min_length=1, max_length=200, description="Short label an analyst reads in the console.")
    skill: str | None = Field(default=None, description="Catalog skill id (kind=skill).")
    inputs: dict[str, str] = Field(default_factory=dict, description="Input name → Jinja template (kind=skill).")
    on_error: Literal["continue", "fail"] = "continue"
    user_email: str | None = Field(default=None, description="Template of the person to ask (kind=checkpoint).")
    question: str | None = Field(
        default=None, max_length=2000, description="Yes/no question for that person (kind=checkpoint)."
    )


class DraftAnswer(BaseModel):
    """The model's playbook: the steps before the analysis, and why this plan."""

    model_config = ConfigDict(extra="forbid")

    steps: list[DraftedStep] = Field(max_length=MAX_DRAFT_STEPS)
    rationale: str = Field(description="One or two sentences: what these steps will confirm or refute.")


class CitedEvidence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: str = Field(description="The step name the evidence came from, or `alert` for the alert itself.")
    quote: str = Field(description="The evidence, quoted.")
    finding: str = Field(description="What it shows.")


class AnalysisAnswer(BaseModel):
    """The model's verdict."""

    model_config = ConfigDict(extra="forbid")

    disposition: Literal["true_positive", "benign_true_positive", "false_positive", "pending"]
    severity: Literal["informational", "low", "medium", "high", "critical"]
    confidence: float = Field(ge=0.0, le=1.0)
    summary: str = Field(min_length=1, max_length=4000)
    key_findings: list[str] = Field(default_factory=list, max_length=20)
    recommended_actions: list[str] = Field(default_factory=list, max_length=20)
    evidence: list[CitedEvidence] = Field(min_length=1, max_length=30)
    decisive_entities: list[str] = Field(default_factory=list, max_length=20)


def to_playbook(
    answer: DraftAnswer,
    available: Sequence[AvailableSkill],
    chat_available: bool,
    skill_inputs: Mapping[str, type[BaseModel]],
) -> tuple[PlaybookDefinition | None, list[str]]:
    """The drafted playbook, or the problems to send back: unknown skills, bad inputs, unguarded writes."""
    offered = {skill.skill_id: skill for skill in available}
    problems: list[str] = []
    steps: list[PlaybookStep] = []
    asked_first = False
    for index, drafted in enumerate(answer.steps):
        where = f"steps[{index}] ({drafted.name!r})"
        if drafted.kind == "checkpoint":
            if not chat_available:
                problems.append(f"{where}: chat is not available to this organization; no checkpoint steps.")
            elif not (drafted.user_email or "").strip() or not (drafted.question or "").strip():
                problems.append(f"{where}: a checkpoint needs `user_email` and `question`.")
            else:
                steps.append(
                    CheckpointStep(
                        name=drafted.name, user_email=drafted.user_email or "", question=drafted.question or ""
                    )
                )
                asked_first = True
            continue
        skill = offered.get(canonical_skill_id(drafted.skill or ""))  # a display name is accepted too
        if skill is None:
            problems.append(f"{where}: {drafted.skill!r} is not a skill in the catalog given.")
            continue
        if skill.writes and not asked_first:
            problems.append(f"{where}: {skill.skill_id!r} writes, so a checkpoint step must come before it.")
            continue
        steps.append(
            SkillStep(
                name=drafted.name, skill=skill.skill_id, inputs=drafted.inputs, on_error=OnError(drafted.on_error)
            )
        )
    steps.append(AnalyzeStep(name=ANALYZE_STEP_NAME))
    try:
        definition = PlaybookDefinition(steps=steps)
    except ValidationError as error:
        return None, [*problems, f"The playbook is not valid: {error.errors(include_url=False)}"]
    for problem in step_problems(definition, skill_inputs):
        problems.append(f"{problem['field']}: {problem['message']}")
    return (None, problems) if problems else (definition, [])


_VERDICT = {
    Disposition.TRUE_POSITIVE: Verdict.MALICIOUS,
    Disposition.BENIGN_TRUE_POSITIVE: Verdict.BENIGN,
    Disposition.FALSE_POSITIVE: Verdict.BENIGN,
    Disposition.PENDING: Verdict.SUSPICIOUS,
}


def analysis_problems(answer: AnalysisAnswer, evidence: Sequence[Evidence], tool_sources: set[str]) -> list[str]:
    """Citations must name a real source: a playbook step, a follow-up tool call, or the alert."""
    sources = {item.step_name for item in evidence} | tool_sources | {"alert"}
    return [
        f"evidence[{index}].step {cited.step!r} is not a step, tool call or `alert` (known: {sorted(sources)})"
        for index, cited in enumerate(answer.evidence)
        if cited.step not in sources
    ]


def to_analysis(
    answer: AnalysisAnswer, category: Category, model: str, flagged: Sequence[Citation], evidence: Sequence[Evidence]
) -> Analysis:
    """Vigil's Analysis; the category stays the one vendor fields decide, injection flags are always findings."""
    skills = {item.step_name: item.skill_id for item in evidence}
    citations = [*flagged] + [
        Citation(
            rule=LLM_RULE,
            source=cited.step,
            skill_id=skills.get(cited.step),
            locator="",
            quote=cited.quote[:300],
            finding=cited.finding,
            points=0.0,
        )
        for cited in answer.evidence
    ]
    disposition = Disposition(answer.disposition)
    return Analysis(
        verdict=_VERDICT[disposition],
        severity=Severity(answer.severity),
        disposition=disposition,
        confidence=answer.confidence,
        summary=answer.summary,
        key_findings=[c.finding for c in flagged] + answer.key_findings,
        recommended_actions=answer.recommended_actions,
        category=category,
        citations=citations,
        decisive_entities=answer.decisive_entities,
        model=model,
    )
