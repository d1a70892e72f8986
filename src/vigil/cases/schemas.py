"""Case shapes for the API."""

from __future__ import annotations

import json
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from vigil.ai.schemas import Citation
from vigil.ai.transcript import ExchangeKind, Stage
from vigil.cases.constants import CaseDisposition, CaseSeverity, CaseStatus
from vigil.input_types import Text

COMMENT_MAX_CHARS = 10_000


class CaseEventOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    at: int
    actor: str
    kind: str
    message: str
    field: str | None = Field(default=None, description="For an analyst's change: the field that changed.")
    from_value: str | None = Field(default=None, description="The field's value before the change (null: unset).")
    to_value: str | None = Field(default=None, description="The field's value after the change (null: unset).")


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
    citations: list[Citation] = Field(
        default=[],
        description="The evidence the verdict rests on: which step, which record or field, the quote, the rule.",
    )
    ai_model: str | None = Field(
        default=None,
        description="Who wrote the verdict: `builtin` (the built-in analyst) or a model string such as "
        "`openai-chat:gpt-4.1`; null for a case written before models could investigate.",
    )
    ai_fallback_reason: str | None = Field(
        default=None,
        description="Why the built-in analyst finished the investigation instead of the configured model; "
        "null when the model (or the built-in analyst by choice) wrote the verdict.",
    )
    assignee: str | None
    created_at: int
    modified_at: int
    closed_at: int | None

    @field_validator("findings", "recommended_actions", "citations", mode="before")
    @classmethod
    def _parse_list(cls, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value


class AiExchangeOut(BaseModel):
    """One model request or one tool call the investigator made, as stored for audit."""

    model_config = ConfigDict(from_attributes=True)

    attempt: int | None = Field(description="The investigation attempt the call belongs to (0 first, n a re-run).")
    stage: Stage = Field(description="`draft` (writing the alert type's playbook) or `analyze` (the verdict).")
    kind: ExchangeKind = Field(description="`model` for a model request, `tool` for a follow-up skill call.")
    model: str = Field(description="The model string that served a request, or `vigil` for a tool call.")
    request: Any = Field(
        description="Model: the messages added since the previous request, in pydantic-ai's JSON form (parts "
        "`user-prompt`, `tool-return`, `retry-prompt`; the request's `instructions`). Tool: `{tool, skill_id, "
        "inputs}`; `skill_id` is null when the model asked for a tool it was not offered."
    )
    response: Any = Field(
        description="Model: a one-element list with the response (parts `text`, `tool-call`, and its `usage`). "
        "Tool: the skill's output. Null when the call failed or was refused."
    )
    error: str | None = Field(description="Why the call failed or was refused.")
    error_kind: str | None = Field(
        description="`timeout`, `rate_limit`, `server_error`, `skill_error`, `refused` (a tool the model was "
        "not offered, e.g. a write skill: nothing ran), …"
    )
    retries: list[str] = Field(description="Failed tries before the outcome, each with its reason.")
    input_tokens: int = Field(description="Tokens the model read for this request (0 for a tool call).")
    output_tokens: int = Field(description="Tokens the model wrote for this request (0 for a tool call).")
    cost_usd: float | None = Field(description="Estimate from public prices; null when the price is unknown.")
    started_at: float = Field(description="When the call started, epoch seconds.")
    duration_ms: int = Field(description="How long it took, retries included.")


class AiTotalsOut(BaseModel):
    """Sums over the exchanges listed next to it."""

    model_config = ConfigDict(from_attributes=True)

    model_requests: int = Field(description="Model requests made (failed ones included).")
    tool_calls: int = Field(description="Tool calls the model asked for (refused ones included).")
    input_tokens: int = Field(description="Input tokens over all model requests.")
    output_tokens: int = Field(description="Output tokens over all model requests.")
    cost_usd: float | None = Field(description="Summed estimate of the requests with a known price; null if none.")


class AiTrailOut(BaseModel):
    """Everything the case's investigations asked a model and its tools, over every attempt of the alert."""

    totals: AiTotalsOut
    exchanges: list[AiExchangeOut] = Field(
        description="In order: each attempt's drafting requests, then its analysis requests and tool calls. "
        "Empty when the built-in analyst investigated without a model."
    )


class CaseDetail(CaseOut):
    evidence: list[EvidenceOut]
    timeline: list[CaseEventOut]
    comments: list[CaseCommentOut]
    ai: AiTrailOut = Field(
        description="Every prompt, model response, tool call (inputs and output), token count and cost estimate "
        "of the investigations behind this case (re-runs included)."
    )


class CasePage(BaseModel):
    cases: list[CaseOut]
    next_cursor: str | None


class CaseUpdate(BaseModel):
    """An analyst's change to a case; only the fields present are changed (`"assignee": null` unassigns).

    Setting `status` to `closed` needs a disposition other than `pending` (send both in one request to
    close with a verdict); leaving `closed` reopens the case. Setting a field to its current value is a no-op.
    """

    model_config = ConfigDict(extra="forbid")

    status: CaseStatus | None = None
    severity: CaseSeverity | None = None
    disposition: CaseDisposition | None = None
    assignee: Text | None = Field(
        default=None,
        max_length=320,
        description="Email of a console user who can see the case's organization; null for unassigned.",
    )

    @model_validator(mode="after")
    def _something_to_change(self) -> CaseUpdate:
        if not self.model_fields_set:
            raise ValueError("Send at least one of status, severity, disposition, assignee.")
        for name in ("status", "severity", "disposition"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null.")
        return self


class CommentCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    body: Text = Field(min_length=1, max_length=COMMENT_MAX_CHARS, description="The comment text (plain text).")

    @field_validator("body")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("The comment is empty.")
        return value.strip()
