"""What an investigator's outside calls were: every model request and tool call, kept on the case for audit."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ExchangeKind(StrEnum):
    MODEL = "model"
    TOOL = "tool"


class Stage(StrEnum):
    """Which part of the investigation the call served."""

    DRAFT = "draft"
    ANALYZE = "analyze"


class Exchange(BaseModel):
    """One model request (the messages sent since the previous one, the response) or one tool call.

    Stored as the record of a durable step: a replayed investigation reads it back instead of calling again.
    """

    model_config = ConfigDict(frozen=True)

    kind: ExchangeKind
    stage: Stage
    model: str = Field(description="The model string that served it (`openai-chat:…`), or `vigil` for a tool call.")
    request: Any = Field(description="Model: the messages added since the last request. Tool: name, skill, inputs.")
    response: Any = Field(default=None, description="Model: the response parts. Tool: the skill's output.")
    error: str | None = Field(default=None, description="Why the call failed or was refused; secrets never appear.")
    error_kind: str | None = Field(default=None, description="timeout, rate_limit, server_error, refused, …")
    retries: list[str] = Field(default=[], description="Failed tries before the outcome, each with its reason.")
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = Field(default=None, description="Estimate from public prices; None when unknown.")
    started_at: float
    duration_ms: int = 0
    attempt: int | None = Field(default=None, description="The investigation attempt; set when read back.")


class ExchangeTotals(BaseModel):
    """Sums over an investigation's (or an organization's) exchanges."""

    model_requests: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    @classmethod
    def of(cls, exchanges: list[Exchange]) -> ExchangeTotals:
        costs = [e.cost_usd for e in exchanges if e.cost_usd is not None]
        return cls(
            model_requests=sum(e.kind is ExchangeKind.MODEL for e in exchanges),
            tool_calls=sum(e.kind is ExchangeKind.TOOL for e in exchanges),
            input_tokens=sum(e.input_tokens for e in exchanges),
            output_tokens=sum(e.output_tokens for e in exchanges),
            cost_usd=round(sum(costs), 6) if costs else None,
        )
