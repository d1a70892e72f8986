"""One model conversation: requests, follow-up tool calls and one repair, each a durable recorded call.

Vigil drives the loop itself (pydantic-ai's direct `model_request`) rather than an agent run, so each model
request and each tool call is its own durable step with its own audit record, budgets are checked between them,
and a write tool cannot exist: only read-only skills are ever offered, anything else the model names is refused.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_ai.direct import model_request
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.tools import ToolDefinition

from vigil.ai.investigator import AiCalls
from vigil.ai.llm.config import Limits
from vigil.ai.llm.prompts import tool_output
from vigil.ai.llm.tools import OUTPUT_TOOL, ToolIndex
from vigil.ai.transcript import Exchange, ExchangeKind, Stage

T = TypeVar("T", bound=BaseModel)
AsyncRunner = Callable[[Coroutine[Any, Any, ModelResponse], float], ModelResponse]
TOOL_ACTOR = "vigil"
#: One chance to fix an invalid answer, then the built-in analyst takes over.
REPAIR_ATTEMPTS = 1


class LlmFailure(Exception):
    """The conversation cannot produce an answer; `kind` is what the case and metrics record."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"{kind}: {reason}")
        self.kind = kind
        self.reason = reason


@dataclass(frozen=True)
class _Classified:
    kind: str
    transient: bool
    retry_after: float | None = None


def classify_error(error: BaseException) -> _Classified:
    """Which failures are worth another try (rate limits, 5xx, timeouts, connections) and which are not."""
    if isinstance(error, TimeoutError | ModelTimeoutError):
        return _Classified("timeout", True)
    if isinstance(error, ModelRateLimitError):
        return _Classified("rate_limit", True, error.retry_after)
    if isinstance(error, ModelAuthenticationError):
        return _Classified("authentication", False)
    if isinstance(error, ModelServerError | ModelUnavailableError):
        return _Classified("server_error", True, error.retry_after)
    if isinstance(error, ModelConnectionError):
        return _Classified("connection", True)
    if isinstance(error, ModelHTTPError):
        if error.status_code == 429:
            return _Classified("rate_limit", True, error.retry_after)
        if error.status_code >= 500:
            return _Classified("server_error", True, error.retry_after)
        return _Classified(f"http_{error.status_code}", False)
    if isinstance(error, ModelAPIError):
        return _Classified("api_error", False)
    if isinstance(error, UnexpectedModelBehavior):
        return _Classified("invalid_output", False)
    return _Classified("error", False)


def _describe(error: BaseException, secrets: tuple[str, ...]) -> str:
    """The error for the case and the logs, with any configured key scrubbed (providers quote keys back)."""
    text = str(error).strip() or type(error).__name__
    for secret in secrets:
        text = text.replace(secret, "***")
    return f"{type(error).__name__}: {text}"[:500]


def _messages_json(messages: list[ModelMessage]) -> Any:
    return ModelMessagesTypeAdapter.dump_python(messages, mode="json")


def _response_of(exchange: Exchange) -> ModelResponse:
    (response,) = ModelMessagesTypeAdapter.validate_python(exchange.response)
    assert isinstance(response, ModelResponse)
    return response


def _cost(response: ModelResponse) -> float | None:
    try:
        return float(response.cost().total_price)
    except (LookupError, ValueError, AssertionError):
        return None  # a local or unpriced model


def _arguments(call: ToolCallPart) -> dict[str, Any]:
    try:
        return call.args_as_dict()
    except (ValueError, TypeError):
        return {}


@dataclass
class Conversation:
    """A conversation with one model for one stage; `run` returns the validated answer or raises `LlmFailure`."""

    model: Model
    model_name: str
    limits: Limits
    run_async: AsyncRunner
    calls: AiCalls
    stage: Stage
    #: Values never to appear in a recorded error (the model's API key).
    secrets: tuple[str, ...] = ()
    tool_calls_made: int = 0
    tokens_used: int = 0
    tool_sources: set[str] = field(default_factory=set)

    def run(
        self,
        instructions: str,
        prompt: str,
        answer_type: type[T],
        tools: ToolIndex,
        problems: Callable[[T], list[str]],
    ) -> T:
        started = self.calls.durable.clock()
        parameters = ModelRequestParameters(
            function_tools=tools.definitions(),
            output_mode="tool",
            output_tools=[
                ToolDefinition(
                    name=OUTPUT_TOOL,
                    description=f"Your final answer ({answer_type.__name__}).",
                    parameters_json_schema=answer_type.model_json_schema(),
                    kind="output",
                )
            ],
            allow_text_output=False,
        )
        history: list[ModelMessage] = []
        pending: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(content=prompt)], instructions=instructions)]
        repairs = 0
        while True:
            remaining = self.limits.max_seconds - (self.calls.durable.clock() - started)
            if remaining <= 0:
                raise LlmFailure("budget", f"the conversation used its {self.limits.max_seconds:g} s of wall time")
            sent, new = [*history, *pending], pending
            exchange = self.calls.durable.once(partial(self._request, sent, new, parameters, remaining))
            if exchange.error is not None:
                raise LlmFailure(exchange.error_kind or "error", exchange.error)
            response = _response_of(exchange)
            history = [*sent, response]
            self.tokens_used += exchange.input_tokens + exchange.output_tokens
            tool_calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
            finals = [call for call in tool_calls if call.tool_name == OUTPUT_TOOL]
            if finals:
                answer, issues = self._validate(finals[0], answer_type, problems)
                if answer is not None:
                    return answer
                replies: list[Any] = [
                    ToolReturnPart(
                        tool_name=OUTPUT_TOOL,
                        content="\n".join(issues),
                        tool_call_id=finals[0].tool_call_id,
                        outcome="retried",
                        retry=RetryInfo(cause="validation_error"),
                    )
                ]
                replies += [self._not_run(call) for call in tool_calls if call is not finals[0]]
            elif tool_calls:
                replies = [self._tool(call, tools) for call in tool_calls]
                issues = []
            else:
                issues = ["You answered in text; answer by calling the `final_result` tool."]
                replies = [RetryFeedbackPart(content=issues[0], retry=RetryInfo(cause="no_output"))]
            if issues:
                repairs += 1
                if repairs > REPAIR_ATTEMPTS:
                    raise LlmFailure("invalid_output", "still invalid after one repair: " + "; ".join(issues))
            if self.tokens_used >= self.limits.max_tokens:
                raise LlmFailure(
                    "budget", f"the conversation used {self.tokens_used} of {self.limits.max_tokens} tokens"
                )
            pending = [ModelRequest(parts=replies, instructions=instructions)]

    # -- one model request (inside a durable call) -------------------------------------------------

    def _request(
        self,
        sent: list[ModelMessage],
        new: list[ModelMessage],
        parameters: ModelRequestParameters,
        remaining: float,
    ) -> Exchange:
        """Send, re-trying 429s, 5xx and timeouts with backoff (Retry-After wins); never raises."""
        started, clock = time.time(), time.perf_counter()
        retries: list[str] = []
        base: dict[str, Any] = {
            "kind": ExchangeKind.MODEL,
            "stage": self.stage,
            "model": self.model_name,
            "request": _messages_json(new),
            "started_at": started,
        }
        for attempt in range(self.limits.max_retries + 1):
            left = remaining - (time.perf_counter() - clock)
            timeout = min(self.limits.request_timeout_seconds, max(left, 0.0))
            try:
                if timeout <= 0:
                    raise TimeoutError("no wall time left in the conversation's budget")
                response = self.run_async(
                    model_request(self.model, sent, model_request_parameters=parameters, instrument=False), timeout
                )
            except Exception as error:
                if isinstance(error, TimeoutError) and not str(error):
                    error = TimeoutError(f"no response within {timeout:g} s")
                verdict = classify_error(error)
                wait = verdict.retry_after or self.limits.retry_backoff_seconds * (2**attempt)
                wait = min(wait, self.limits.max_retry_after_seconds)
                out_of_time = time.perf_counter() - clock + wait >= remaining
                if not verdict.transient or attempt == self.limits.max_retries or out_of_time:
                    return Exchange(
                        **base,
                        error=_describe(error, self.secrets),
                        error_kind=verdict.kind,
                        retries=retries,
                        duration_ms=int((time.perf_counter() - clock) * 1000),
                    )
                retries.append(
                    f"{verdict.kind} after {time.perf_counter() - clock:.1f} s: {_describe(error, self.secrets)}"
                )
                time.sleep(wait)
                continue
            return Exchange(
                **base,
                response=_messages_json([response]),
                retries=retries,
                input_tokens=response.usage.input_tokens,
                output_tokens=response.usage.output_tokens,
                cost_usd=_cost(response),
                duration_ms=int((time.perf_counter() - clock) * 1000),
            )
        raise AssertionError("unreachable: the last attempt always returns")

    # -- answers and tool calls ----------------------------------------------------------------------

    @staticmethod
    def _validate(
        call: ToolCallPart, answer_type: type[T], problems: Callable[[T], list[str]]
    ) -> tuple[T | None, list[str]]:
        try:
            answer = answer_type.model_validate(_arguments(call))
        except ValidationError as error:
            return None, [
                f"{'.'.join(str(p) for p in issue['loc']) or 'answer'}: {issue['msg']}"
                for issue in error.errors(include_url=False)
            ]
        issues = problems(answer)
        return (None, issues) if issues else (answer, [])

    @staticmethod
    def _not_run(call: ToolCallPart) -> ToolReturnPart:
        return ToolReturnPart(
            tool_name=call.tool_name,
            content="Not run: your final answer came in the same turn; fix the answer instead.",
            tool_call_id=call.tool_call_id,
        )

    def _tool(self, call: ToolCallPart, tools: ToolIndex) -> ToolReturnPart:
        """Run an offered read-only skill within budget; anything else is refused, and both are recorded."""
        skill = tools.by_name.get(call.tool_name)
        arguments = _arguments(call)
        inputs = {k: v if isinstance(v, str) else json.dumps(v) for k, v in arguments.items()}
        request = {"tool": call.tool_name, "skill_id": skill.skill_id if skill else None, "inputs": inputs}
        if skill is None:
            reason = f"Refused: {call.tool_name!r} is not one of the read-only tools offered; nothing was run."
            self.calls.durable.once(
                lambda: Exchange(
                    kind=ExchangeKind.TOOL,
                    stage=self.stage,
                    model=TOOL_ACTOR,
                    request=request,
                    error=reason,
                    error_kind="refused",
                    started_at=time.time(),
                )
            )
            return ToolReturnPart(tool_name=call.tool_name, content=reason, tool_call_id=call.tool_call_id)
        if self.tool_calls_made >= self.limits.max_tool_calls:
            raise LlmFailure("budget", f"the model asked for more than {self.limits.max_tool_calls} tool calls")
        self.tool_calls_made += 1

        def run() -> Exchange:
            started, clock = time.time(), time.perf_counter()
            output, error = self.calls.tools.call(skill.skill_id, inputs)
            return Exchange(
                kind=ExchangeKind.TOOL,
                stage=self.stage,
                model=TOOL_ACTOR,
                request=request,
                response=output,
                error=error,
                error_kind="skill_error" if error else None,
                started_at=started,
                duration_ms=int((time.perf_counter() - clock) * 1000),
            )

        exchange = self.calls.durable.once(run)
        self.tool_sources |= {skill.skill_id, call.tool_name}
        return ToolReturnPart(
            tool_name=call.tool_name,
            content=tool_output(skill.skill_id, exchange.response, exchange.error),
            tool_call_id=call.tool_call_id,
        )
