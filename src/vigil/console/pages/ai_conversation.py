"""The case page's "AI conversation": stored model requests and tool calls turned into rows an analyst reads.

Model requests are stored as pydantic-ai's JSON dump of the messages sent, tool calls as Vigil's own record. A
part of a shape this module does not know is shown as JSON rather than dropped, so the page never hides what was
sent. The template prints every string escaped: prompts and tool outputs quote attacker-written alert content.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from vigil.ai.transcript import Exchange, ExchangeKind, ExchangeTotals, Stage
from vigil.console.rendering import humanize, pretty_json
from vigil.integrations.catalog import skill_name

#: pydantic-ai's name for the structured-answer tool (vigil.ai.llm.tools.OUTPUT_TOOL).
FINAL_ANSWER_TOOL = "final_result"
BUILTIN_MODEL = "builtin"
STAGE_LABELS = {Stage.DRAFT: "Drafting", Stage.ANALYZE: "Analysis"}


@dataclass(frozen=True)
class Part:
    """One piece of a request or response: a heading, the text (pre-formatted) and a style hint."""

    label: str
    body: str
    style: str  # instructions, prompt, tool-result, retry, text, tool-call, inputs, output, other
    note: str = ""


@dataclass(frozen=True)
class Row:
    """One exchange: a model request with what was sent and what came back, or one tool call."""

    number: int
    stage: str
    kind: str
    title: str
    subtitle: str
    status: str  # ok, error, refused
    status_label: str
    error: str | None
    retries: list[str]
    duration_ms: int
    started_at: int
    tokens: str
    cost: str
    sent: list[Part] = field(default_factory=list)
    received: list[Part] = field(default_factory=list)


@dataclass(frozen=True)
class Conversation:
    rows: list[Row]
    totals: ExchangeTotals
    summary: str


def investigated_by(ai_model: str | None) -> str:
    """Who wrote the verdict, for people: the built-in analyst, or the model string."""
    if ai_model is None:
        return ""
    return "Built-in analyst" if ai_model == BUILTIN_MODEL else ai_model


def conversation(exchanges: list[Exchange]) -> Conversation:
    totals = ExchangeTotals.of(exchanges)
    seen_instructions: dict[str, int] = {}
    rows = [_row(number, exchange, seen_instructions) for number, exchange in enumerate(exchanges, start=1)]
    return Conversation(rows=rows, totals=totals, summary=_summary(totals))


def _summary(totals: ExchangeTotals) -> str:
    pieces = [
        _count(totals.model_requests, "model request"),
        _count(totals.tool_calls, "tool call"),
        f"{totals.input_tokens:,} input and {totals.output_tokens:,} output tokens",
    ]
    if totals.cost_usd is not None:
        pieces.append(f"about {_money(totals.cost_usd)}")
    return " · ".join(pieces)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _money(value: float) -> str:
    return "< $0.0001" if 0 < value < 0.0001 else f"${value:,.4f}"


def _row(number: int, exchange: Exchange, seen_instructions: dict[str, int]) -> Row:
    if exchange.error_kind == "refused":
        status, status_label = "refused", "Refused"
    elif exchange.error is not None:
        status, status_label = "error", humanize(exchange.error_kind or "error")
    else:
        status, status_label = "ok", "OK"
    common: dict[str, Any] = {
        "number": number,
        "stage": STAGE_LABELS.get(exchange.stage, humanize(exchange.stage.value)),
        "kind": exchange.kind.value,
        "status": status,
        "status_label": status_label,
        "error": exchange.error,
        "retries": list(exchange.retries),
        "duration_ms": exchange.duration_ms,
        "started_at": int(exchange.started_at),
    }
    if exchange.kind is ExchangeKind.TOOL:
        return _tool_row(exchange, common)
    cost = "" if exchange.cost_usd is None else _money(exchange.cost_usd)
    return Row(
        **common,
        title=exchange.model,
        subtitle="model request",
        tokens=f"{exchange.input_tokens:,} in / {exchange.output_tokens:,} out tokens",
        cost=cost,
        sent=list(_request_parts(exchange.request, number, seen_instructions)),
        received=list(_response_parts(exchange.response)),
    )


def _tool_row(exchange: Exchange, common: dict[str, Any]) -> Row:
    request = exchange.request if isinstance(exchange.request, dict) else {}
    tool = str(request.get("tool") or "tool")
    skill_id = request.get("skill_id")
    if request:
        sent = [Part("Inputs", pretty_json(request.get("inputs") or {}), "inputs")]
    else:
        sent = [Part("Request", pretty_json(exchange.request), "other")]
    received = [] if exchange.response is None else [Part("Output", pretty_json(exchange.response), "output")]
    return Row(
        **common,
        title=skill_name(str(skill_id)) if skill_id else tool,
        subtitle=f"tool {tool}" if skill_id else "a tool the model was not offered",
        tokens="",
        cost="",
        sent=sent,
        received=received,
    )


def _request_parts(request: Any, number: int, seen_instructions: dict[str, int]) -> Iterator[Part]:
    if not isinstance(request, list):
        yield Part("Request", pretty_json(request), "other")
        return
    for message in request:
        if not isinstance(message, dict):
            yield Part("Message", pretty_json(message), "other")
            continue
        instructions = message.get("instructions")
        if isinstance(instructions, str) and instructions:
            first = seen_instructions.setdefault(instructions, number)
            if first == number:
                yield Part("Instructions", instructions, "instructions")
            else:
                yield Part("Instructions", "", "instructions", note=f"The same as in #{first}.")
        for part in message.get("parts") or []:
            yield _request_part(part)


def _request_part(part: Any) -> Part:
    if not isinstance(part, dict):
        return Part("Part", pretty_json(part), "other")
    kind = part.get("part_kind")
    content = part.get("content")
    if kind == "user-prompt":
        return Part("Prompt", _text(content), "prompt")
    if kind == "system-prompt":
        return Part("System prompt", _text(content), "instructions")
    outcome = part.get("outcome") or "success"
    if kind == "tool-return" and outcome == "retried":  # how pydantic-ai now asks for a corrected tool call
        return Part(f"Retry prompt · {part.get('tool_name')}", _text(content), "retry", _call_note(part))
    if kind == "tool-return":
        label = f"Tool result · {part.get('tool_name')}" + ("" if outcome == "success" else f" ({outcome})")
        return Part(label, _text(content), "tool-result", _call_note(part))
    if kind in ("retry-prompt", "retry-feedback"):
        tool = part.get("tool_name")
        label = "Retry prompt" + (f" · {tool}" if tool else "")
        return Part(label, _text(content), "retry", _call_note(part) if tool else "")
    return Part(humanize(str(kind or "part").replace("-", "_")), pretty_json(part), "other")


def _response_parts(response: Any) -> Iterator[Part]:
    if response is None:
        return
    messages = response if isinstance(response, list) else [response]
    for message in messages:
        if not isinstance(message, dict):
            yield Part("Response", pretty_json(message), "other")
            continue
        for part in message.get("parts") or []:
            yield _response_part(part)


def _response_part(part: Any) -> Part:
    if not isinstance(part, dict):
        return Part("Part", pretty_json(part), "other")
    kind = part.get("part_kind")
    if kind == "text":
        return Part("Text", _text(part.get("content")), "text")
    if kind == "thinking":
        return Part("Thinking", _text(part.get("content")), "text")
    if kind == "tool-call":
        name = part.get("tool_name")
        label = "Final answer" if name == FINAL_ANSWER_TOOL else f"Tool call · {name}"
        return Part(label, _arguments(part.get("args")), "tool-call", _call_note(part))
    return Part(humanize(str(kind or "part").replace("-", "_")), pretty_json(part), "other")


def _call_note(part: dict[str, Any]) -> str:
    call_id = part.get("tool_call_id")
    return f"call {call_id}" if call_id else ""


def _arguments(args: Any) -> str:
    """A tool call's arguments as indented JSON (providers send them as a JSON string or as an object)."""
    if args is None:
        return "{}"
    return pretty_json(args)


def _text(content: Any) -> str:
    """Prompt or tool-result content: text as it is, a list of pieces one after another, anything else as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(item if isinstance(item, str) else pretty_json(item) for item in content)
    return pretty_json(content)
