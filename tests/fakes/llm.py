"""Loopback fake of the LLM providers pydantic-ai talks to (reference F): one server speaking three wire formats.

* OpenAI Chat Completions, ``POST /v1/chat/completions`` (``openai-chat:<model>`` / ``OpenAIChatModel``, and the
  OpenAI-compatible servers: vLLM, Ollama, LiteLLM), key in ``Authorization: Bearer``;
* the OpenAI Responses API, ``POST /v1/responses`` (``openai:<model>`` / ``OpenAIResponsesModel``), same auth;
* Anthropic Messages, ``POST /v1/messages`` (``AnthropicModel``), key in ``x-api-key`` plus ``anthropic-version``.

All three answer with and without ``"stream": true`` (SSE in each wire's own event shapes). pydantic-ai streams an
Anthropic request even for ``agent.run`` when the model's maximum output is above the SDK's non-streaming limit
(claude-sonnet-4-5 without an explicit ``max_tokens``), so that path is a normal one.

Tests script the model provider-neutrally: ``script(Reply(...), ErrorReply(...))`` queues answers (first in, first
out) and ``respond_with(fn)`` decides from the request once the queue is empty. With neither, a model request gets a
500 saying so, so an unexpected extra model call fails loudly. Every model request is parsed into an ``LlmCall``
(``calls``) with its messages, tools and tool results in one shape whatever the wire.

Like the real providers, the fake refuses (400, in the wire's own error body) requests a real API would refuse: tool
names outside ``^[a-zA-Z0-9_-]{1,64}$`` (OpenAI) / ``{1,128}`` (Anthropic), a tool call of an assistant turn left
without its result, and a tool result whose call id no earlier assistant turn made. Scripted replies are never checked:
a reply may call a tool the request did not offer, which is how a test plays a misbehaving model.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from vigil.integrations.fakes import FakeVendor

OPENAI_KEY = "sk-test-vigil-fake"
ANTHROPIC_KEY = "sk-ant-test-vigil-fake"

OPENAI_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
ANTHROPIC_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")
NO_REPLY_LEFT = "LlmFake: no scripted reply left"
ANTHROPIC_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}")

Wire = Literal["chat", "responses", "anthropic"]


# --- scripting ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ToolCall:
    """A tool call the fake model makes; ``id`` is generated (``call_...`` / ``toolu_...``) when None."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True)
class Reply:
    """One successful model answer: optional text, then the tool calls, with the usage to report."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    input_tokens: int = 100
    output_tokens: int = 20
    delay_seconds: float = 0.0  # wait this long (asyncio) before answering: client timeouts, crashes mid-call


@dataclass(frozen=True)
class ErrorReply:
    """An HTTP error in the wire's own error body; ``error_type``/``code`` default from the status."""

    status: int
    message: str = "LlmFake: scripted error"
    retry_after: float | None = None  # sent as the `retry-after` header when set
    error_type: str | None = None
    code: str | None = None


@dataclass
class LlmCall:
    """One model request as the fake understood it, in the same shape whatever the wire.

    ``messages`` holds ``{"role": "user" | "assistant" | "tool", "content": str, "tool_calls": [{"id", "name",
    "arguments"}], "tool_results": [{"id", "content"}]}`` dicts (system text is in ``system``, consecutive tool
    results form one "tool" message); ``tools`` holds ``{"name", "description", "parameters"}``. A request refused
    before it could be read (wrong key, missing header, unreadable body) is not a call: see ``LlmFake.requests``.
    One refused by a protocol check is, with its 400 as ``reply``.
    """

    wire: Wire
    model: str
    body: dict[str, Any]
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    tool_result_ids: list[str]
    stream: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    reply: Reply | ErrorReply | None = None
    reply_tool_call_ids: list[str] = field(default_factory=list)  # the ids sent for the reply's tool calls

    @property
    def tool_names(self) -> list[str]:
        return [tool["name"] for tool in self.tools]

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        return [result for message in self.messages for result in message["tool_results"]]

    def tool_result(self, call_id: str) -> str | None:
        """The content sent back for the tool call ``call_id``, or None if the request has none."""
        return next((r["content"] for r in self.tool_results if r["id"] == call_id), None)

    @property
    def user_text(self) -> str:
        """All user message text, joined (the prompt and any retry prompts)."""
        return "\n".join(m["content"] for m in self.messages if m["role"] == "user" and m["content"])


Responder = Callable[[LlmCall], Reply | ErrorReply]


class _Rejected(Exception):
    """A request the real provider would refuse with a 400 (raised while reading or checking it)."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param = param


# --- the fake ----------------------------------------------------------------------------------------------------
class LlmFake(FakeVendor):
    """OpenAI Chat Completions, OpenAI Responses and Anthropic Messages on one loopback server, scripted per test."""

    calls: list[LlmCall]

    def __init__(self) -> None:
        super().__init__()
        self._generation = 0
        self.reset()

    @property
    def openai_base_url(self) -> str:
        """The ``base_url`` for ``OpenAIProvider`` (the OpenAI base URL includes ``/v1``)."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The ``base_url`` for ``AnthropicProvider`` (the SDK adds ``/v1/messages`` itself)."""
        return self.url

    # --- test controls ---------------------------------------------------------------------------------------
    def reset(self) -> None:
        super().reset()
        with self._lock:
            self._script: deque[Reply | ErrorReply] = deque()
            self._responder: Responder | None = None
            self.calls = []
            self._issued_calls: dict[str, set[str]] = {}  # Responses id -> call ids, for previous_response_id
            self._generation += 1  # wakes a delayed reply of an earlier test

    def script(self, *replies: Reply | ErrorReply) -> None:
        """Queue answers for the next model requests, in order (after any already queued)."""
        with self._lock:
            self._script.extend(replies)

    def respond_with(self, responder: Responder | None) -> None:
        """Decide each answer from the request, once the scripted queue is empty (None removes it)."""
        with self._lock:
            self._responder = responder

    @property
    def remaining(self) -> int:
        """How many scripted replies have not been used yet."""
        with self._lock:
            return len(self._script)

    def cancel_delays(self) -> None:
        """End any delayed reply still waiting (it answers 500 at once), as ``reset()`` also does."""
        with self._lock:
            self._generation += 1

    def usage_totals(self) -> tuple[int, int]:
        """(input_tokens, output_tokens) summed over the successful replies sent so far."""
        replies = [call.reply for call in self.calls if isinstance(call.reply, Reply)]
        return sum(r.input_tokens for r in replies), sum(r.output_tokens for r in replies)

    # --- routes ----------------------------------------------------------------------------------------------
    def routes(self) -> list[Route]:
        return [
            self.route("/v1/chat/completions", self.chat_completions, ["POST"]),
            self.route("/v1/responses", self.responses, ["POST"]),
            self.route("/v1/messages", self.messages, ["POST"]),
        ]

    async def chat_completions(self, request: Request) -> Response:
        return await self._handle(request, "chat")

    async def responses(self, request: Request) -> Response:
        return await self._handle(request, "responses")

    async def messages(self, request: Request) -> Response:
        return await self._handle(request, "anthropic")

    async def _handle(self, request: Request, wire: Wire) -> Response:
        denied = _authenticate(request, wire)
        if denied is not None:
            return denied
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _error_response(wire, ErrorReply(400, "We could not parse the JSON body of your request."))
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            call = _PARSERS[wire](body)
        except _Rejected as rejected:
            return _error_response(wire, ErrorReply(400, rejected.message), param=rejected.param)
        except (KeyError, TypeError, AttributeError, IndexError) as error:
            message = f"LlmFake could not read the request ({type(error).__name__}: {error})"
            return _error_response(wire, ErrorReply(400, message))
        call.headers = headers
        with self._lock:
            self.calls.append(call)
            generation = self._generation
            issued = set().union(*self._issued_calls.values()) if body.get("previous_response_id") else set()
        try:
            _check_protocol(call, issued)
        except _Rejected as rejected:
            call.reply = ErrorReply(400, rejected.message, error_type="invalid_request_error")
            return _error_response(wire, call.reply, param=rejected.param)

        reply = self._next_reply(call)
        call.reply = reply
        if isinstance(reply, ErrorReply):
            return _error_response(wire, reply)
        if reply.delay_seconds > 0 and not await self._wait(reply.delay_seconds, generation):
            return _error_response(wire, ErrorReply(500, "LlmFake: reset while a delayed reply was waiting"))
        call.reply_tool_call_ids = [tc.id or _new_id(_CALL_ID_PREFIX[wire]) for tc in reply.tool_calls]
        if wire == "chat":
            return _chat_answer(call, reply)
        if wire == "responses":
            response_id = _new_id("resp_")
            with self._lock:
                self._issued_calls[response_id] = set(call.reply_tool_call_ids)
            return _responses_answer(call, reply, response_id)
        return _anthropic_answer(call, reply)

    def _next_reply(self, call: LlmCall) -> Reply | ErrorReply:
        with self._lock:
            if self._script:
                return self._script.popleft()
            responder = self._responder
        if responder is None:
            return ErrorReply(500, NO_REPLY_LEFT, error_type="server_error")
        try:
            return responder(call)
        except Exception as error:
            return ErrorReply(500, f"LlmFake: the responder raised {error!r}", error_type="server_error")

    async def _wait(self, seconds: float, generation: int) -> bool:
        """Sleep ``seconds``; False when the fake was reset meanwhile (the test that scripted the delay is over)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            await asyncio.sleep(min(left, 0.05))
            if self._generation != generation:
                return False
        return True


# --- auth and errors ---------------------------------------------------------------------------------------------
def _authenticate(request: Request, wire: Wire) -> Response | None:
    if wire == "anthropic":
        # The API takes the key in `x-api-key` or, as anthropic 2.14 sends it, `Authorization: Bearer`.
        key = request.headers.get("x-api-key")
        if key is None:
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            key = token.strip() if scheme.lower() == "bearer" else None
        if key != ANTHROPIC_KEY:
            message = "x-api-key header is required" if not key else "invalid x-api-key"
            return _error_response(wire, ErrorReply(401, message))
        version = request.headers.get("anthropic-version")
        if not version:
            return _error_response(wire, ErrorReply(400, "anthropic-version: header is required"))
        if not ANTHROPIC_VERSION.fullmatch(version):
            return _error_response(wire, ErrorReply(400, f"anthropic-version: invalid version {version!r}"))
        return None
    authorization = request.headers.get("authorization", "")
    scheme, _, key = authorization.partition(" ")
    if scheme.lower() != "bearer" or key.strip() != OPENAI_KEY:
        if not authorization:
            message = (
                "You didn't provide an API key. You need to provide your API key in an Authorization header "
                "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
            )
        else:
            message = f"Incorrect API key provided: {_redact(key.strip())}. You can find your API key at https://platform.openai.com/account/api-keys."
        return _error_response(
            wire, ErrorReply(401, message, error_type="invalid_request_error", code="invalid_api_key")
        )
    return None


def _redact(key: str) -> str:
    return key[:3] + "*" * max(len(key) - 7, 0) + key[-4:] if len(key) > 8 else "***"


_OPENAI_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", None),
    404: ("invalid_request_error", "model_not_found"),
    409: ("invalid_request_error", None),
    422: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _error_response(wire: Wire, error: ErrorReply, *, param: str | None = None) -> Response:
    headers = {"retry-after": f"{error.retry_after:g}"} if error.retry_after is not None else {}
    if wire == "anthropic":
        kind = (
            error.error_type
            or _ANTHROPIC_ERROR_TYPES.get(error.status)
            or ("api_error" if error.status >= 500 else "invalid_request_error")
        )
        headers["request-id"] = _new_id("req_")
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": error.message}}
        return JSONResponse(body, error.status, headers=headers)
    default_type, default_code = _OPENAI_ERROR_TYPES.get(
        error.status, ("server_error" if error.status >= 500 else "invalid_request_error", None)
    )
    headers["x-request-id"] = _new_id("req_")
    body = {
        "error": {
            "message": error.message,
            "type": error.error_type or default_type,
            "param": param,
            "code": error.code if error.code is not None else default_code,
        }
    }
    return JSONResponse(body, error.status, headers=headers)


# --- reading requests --------------------------------------------------------------------------------------------
def _text(content: Any) -> str:
    """The text of a message content: a string, or a list of parts of which the text ones count."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    raise TypeError(f"unexpected message content {content!r}")


def _arguments(raw: Any) -> Any:
    """Tool call arguments as sent: a dict, or the raw string when it is not JSON."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return raw


def _message(role: str, content: str = "") -> dict[str, Any]:
    return {"role": role, "content": content, "tool_calls": [], "tool_results": []}


def _assistant(messages: list[dict[str, Any]], *, text: str = "", call: dict[str, Any] | None = None) -> None:
    """Add to the current assistant turn (Responses sends one turn as several items), or start one."""
    if not messages or messages[-1]["role"] != "assistant":
        messages.append(_message("assistant"))
    turn = messages[-1]
    if text:
        turn["content"] = f"{turn['content']}\n{text}" if turn["content"] else text
    if call is not None:
        turn["tool_calls"].append(call)


def _tool_result(messages: list[dict[str, Any]], call_id: str, content: str) -> None:
    if not messages or messages[-1]["role"] != "tool":
        messages.append(_message("tool"))
    messages[-1]["tool_results"].append({"id": call_id, "content": content})


def _require(body: dict[str, Any], *names: str) -> None:
    for name in names:
        if body.get(name) is None:
            raise _Rejected(f"Missing required parameter: '{name}'.", param=name)


def _new_call(
    wire: Wire, body: dict[str, Any], system: list[str], messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> LlmCall:
    return LlmCall(
        wire=wire,
        model=str(body["model"]),
        body=body,
        system="\n\n".join(part for part in system if part),
        messages=messages,
        tools=tools,
        tool_result_ids=[r["id"] for m in messages for r in m["tool_results"]],
        stream=bool(body.get("stream")),
    )


def _parse_chat(body: dict[str, Any]) -> LlmCall:
    _require(body, "model", "messages")
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    for i, item in enumerate(body["messages"]):
        role = item.get("role")
        if role in ("system", "developer"):
            system.append(_text(item.get("content")))
        elif role == "user":
            messages.append(_message("user", _text(item.get("content"))))
        elif role == "assistant":
            messages.append(_message("assistant", _text(item.get("content"))))
            for tool_call in item.get("tool_calls") or []:
                function = tool_call["function"]
                call = {"id": tool_call["id"], "name": function["name"], "arguments": _arguments(function["arguments"])}
                messages[-1]["tool_calls"].append(call)
        elif role == "tool":
            _tool_result(messages, item["tool_call_id"], _text(item.get("content")))
        elif role != "function":  # the deprecated function-call results carry no call id; nothing to check
            raise _Rejected(
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', "
                "and 'developer'.",
                param=f"messages[{i}].role",
            )
    tools = [
        {
            "name": tool["function"]["name"],
            "description": tool["function"].get("description"),
            "parameters": tool["function"].get("parameters"),
        }
        for tool in body.get("tools") or []
        if tool.get("type") == "function"  # "custom" (free-form) tools have no schema to normalise
    ]
    return _new_call("chat", body, system, messages, tools)


def _parse_responses(body: dict[str, Any]) -> LlmCall:
    _require(body, "model")
    system = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
    messages: list[dict[str, Any]] = []
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for item in items:
        kind = item.get("type", "message")
        if kind == "message":
            role = item["role"]
            if role in ("system", "developer"):
                system.append(_text(item.get("content")))
            elif role == "assistant":
                _assistant(messages, text=_text(item.get("content")))
            else:
                messages.append(_message("user", _text(item.get("content"))))
        elif kind == "function_call":
            call = {"id": item["call_id"], "name": item["name"], "arguments": _arguments(item.get("arguments"))}
            _assistant(messages, call=call)
        elif kind == "function_call_output":
            output = item.get("output")
            _tool_result(messages, item["call_id"], output if isinstance(output, str) else _text(output))
        # reasoning and other provider items carry nothing this fake answers from
    tools = [
        {"name": tool["name"], "description": tool.get("description"), "parameters": tool.get("parameters")}
        for tool in body.get("tools") or []
        if tool.get("type") == "function"
    ]
    return _new_call("responses", body, system, messages, tools)


def _parse_anthropic(body: dict[str, Any]) -> LlmCall:
    for name in ("model", "messages", "max_tokens"):
        if body.get(name) is None:
            raise _Rejected(f"{name}: Field required")
    raw_system = body.get("system")
    system = [raw_system] if isinstance(raw_system, str) else [_text(raw_system)]
    messages: list[dict[str, Any]] = []
    for i, item in enumerate(body["messages"]):
        role = item.get("role")
        content = item.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if role == "assistant":
            messages.append(_message("assistant", _text([b for b in blocks if b.get("type") == "text"])))
            for block in blocks:
                if block.get("type") == "tool_use":
                    messages[-1]["tool_calls"].append(
                        {"id": block["id"], "name": block["name"], "arguments": block.get("input")}
                    )
        elif role == "user":
            for block in blocks:
                if block.get("type") == "tool_result":
                    output = block.get("content")
                    _tool_result(messages, block["tool_use_id"], output if isinstance(output, str) else _text(output))
            text = _text([b for b in blocks if b.get("type") == "text"])
            if text or not any(b.get("type") == "tool_result" for b in blocks):
                messages.append(_message("user", text))
        else:
            raise _Rejected(f"messages.{i}.role: Input should be 'user' or 'assistant'")
    tools = [
        {"name": tool.get("name"), "description": tool.get("description"), "parameters": tool.get("input_schema")}
        for tool in body.get("tools") or []
        if tool.get("type") in (None, "custom")
    ]
    return _new_call("anthropic", body, system, messages, tools)


_PARSERS: dict[Wire, Callable[[dict[str, Any]], LlmCall]] = {
    "chat": _parse_chat,
    "responses": _parse_responses,
    "anthropic": _parse_anthropic,
}


def _check_protocol(call: LlmCall, issued: set[str]) -> None:
    """The checks the real APIs make: tool names, and every tool call answered, every tool result called for.

    ``issued`` holds the call ids of earlier responses a Responses request continues (``previous_response_id``).
    """
    anthropic = call.wire == "anthropic"
    pattern, limit = (ANTHROPIC_TOOL_NAME, 128) if anthropic else (OPENAI_TOOL_NAME, 64)
    for i, tool in enumerate(call.tools):
        name = tool["name"]
        if not isinstance(name, str) or not pattern.fullmatch(name):
            where = f"tools.{i}.custom.name" if anthropic else f"tools[{i}].function.name"
            if call.wire == "responses":
                where = f"tools[{i}].name"
            raise _Rejected(
                f"Invalid '{where}': string does not match pattern. Expected a string that matches the pattern "
                f"'^[a-zA-Z0-9_-]{{1,{limit}}}$' (got {name!r}).",
                param=where,
            )
    known = set(issued)  # every call id made so far (Responses may answer any of them)
    turn: set[str] = set()  # the call ids of the assistant turn just before (Chat and Anthropic answer only those)
    pending: list[str] = []
    for message in call.messages:
        if message["role"] == "tool":
            for result in message["tool_results"]:
                allowed = known if call.wire == "responses" else turn
                if result["id"] not in allowed:
                    raise _Rejected(_UNKNOWN_RESULT[call.wire].format(id=result["id"]))
                if result["id"] in pending:
                    pending.remove(result["id"])
            continue
        if pending:
            raise _Rejected(_UNANSWERED_CALL[call.wire].format(ids=", ".join(pending)))
        turn = {tc["id"] for tc in message["tool_calls"]}
        pending = [tc["id"] for tc in message["tool_calls"]]
        known |= turn
    if pending:
        raise _Rejected(_UNANSWERED_CALL[call.wire].format(ids=", ".join(pending)))


_UNKNOWN_RESULT: dict[Wire, str] = {
    "chat": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
    "'tool_calls' (tool_call_id {id}).",
    "responses": "No tool call found for function call output with call_id {id}.",
    "anthropic": "unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have "
    "a corresponding `tool_use` block in the previous message.",
}
_UNANSWERED_CALL: dict[Wire, str] = {
    "chat": "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    "responses": "No tool output found for function call {ids}.",
    "anthropic": "`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. Each `tool_use` "
    "block must have a corresponding `tool_result` block in the next message.",
}


# --- answering ---------------------------------------------------------------------------------------------------
_CALL_ID_PREFIX: dict[Wire, str] = {"chat": "call_", "responses": "call_", "anthropic": "toolu_"}


def _new_id(prefix: str) -> str:
    return prefix + uuid.uuid4().hex[:24]


def _pieces(text: str, size: int = 16) -> list[str]:
    """``text`` cut into stream deltas (at least one, possibly empty)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _arguments_json(tool_call: ToolCall) -> str:
    return json.dumps(tool_call.arguments, separators=(",", ":"))


def _sse(events: Iterator[dict[str, Any]], *, named: bool, done: bool = False) -> StreamingResponse:
    """Server-sent events: ``event: <type>`` lines for Anthropic and Responses, plain ``data:`` for Chat."""

    async def generate() -> AsyncIterator[bytes]:
        for event in events:
            prefix = f"event: {event['type']}\n" if named else ""
            yield f"{prefix}data: {json.dumps(event)}\n\n".encode()
        if done:
            yield b"data: [DONE]\n\n"

    return StreamingResponse(generate(), media_type="text/event-stream", headers={"cache-control": "no-cache"})


# Chat Completions
def _chat_usage(reply: Reply) -> dict[str, Any]:
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _chat_answer(call: LlmCall, reply: Reply) -> Response:
    completion_id = _new_id("chatcmpl-")
    created = int(time.time())
    finish_reason = "tool_calls" if reply.tool_calls else "stop"
    calls = list(zip(reply.tool_calls, call.reply_tool_call_ids, strict=True))
    headers = {"x-request-id": _new_id("req_")}
    if not call.stream:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text if reply.text is not None or reply.tool_calls else "",
            "refusal": None,
            "annotations": [],
        }
        if calls:
            message["tool_calls"] = [
                {"id": tid, "type": "function", "function": {"name": tc.name, "arguments": _arguments_json(tc)}}
                for tc, tid in calls
            ]
        body = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": call.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": _chat_usage(reply),
            "service_tier": "default",
            "system_fingerprint": None,
        }
        return JSONResponse(body, headers=headers)

    options = call.body.get("stream_options") or {}
    include_usage = bool(options.get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        event: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": call.model,
            "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            event["usage"] = None
        return event

    def events() -> Iterator[dict[str, Any]]:
        yield chunk({"role": "assistant", "content": "", "refusal": None})
        if reply.text:
            for piece in _pieces(reply.text):
                yield chunk({"content": piece})
        for index, (tc, tid) in enumerate(calls):
            opening = {"index": index, "id": tid, "type": "function", "function": {"name": tc.name, "arguments": ""}}
            yield chunk({"tool_calls": [opening]})
            for piece in _pieces(_arguments_json(tc)):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, finish_reason)
        if include_usage:
            yield {**chunk({}), "choices": [], "usage": _chat_usage(reply)}

    response = _sse(events(), named=False, done=True)
    response.headers.update(headers)
    return response


# Responses
def _responses_usage(reply: Reply) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }


def _responses_output(call: LlmCall, reply: Reply) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if reply.text is not None or not reply.tool_calls:
        text = {"type": "output_text", "text": reply.text or "", "annotations": [], "logprobs": []}
        output.append(
            {"type": "message", "id": _new_id("msg_"), "status": "completed", "role": "assistant", "content": [text]}
        )
    for tc, tid in zip(reply.tool_calls, call.reply_tool_call_ids, strict=True):
        output.append(
            {
                "type": "function_call",
                "id": _new_id("fc_"),
                "call_id": tid,
                "name": tc.name,
                "arguments": _arguments_json(tc),
                "status": "completed",
            }
        )
    return output


def _responses_object(
    call: LlmCall, response_id: str, output: list[dict[str, Any]], reply: Reply | None
) -> dict[str, Any]:
    body = call.body
    return {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed" if reply is not None else "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "metadata": body.get("metadata") or {},
        "model": call.model,
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": _responses_usage(reply) if reply is not None else None,
        "user": None,
    }


def _responses_answer(call: LlmCall, reply: Reply, response_id: str) -> Response:
    output = _responses_output(call, reply)
    headers = {"x-request-id": _new_id("req_")}
    if not call.stream:
        return JSONResponse(_responses_object(call, response_id, output, reply), headers=headers)

    def events() -> Iterator[dict[str, Any]]:
        started = _responses_object(call, response_id, [], None)
        yield {"type": "response.created", "response": started}
        yield {"type": "response.in_progress", "response": started}
        for index, item in enumerate(output):
            where = {"item_id": item["id"], "output_index": index}
            if item["type"] == "message":
                part = item["content"][0]
                yield {"type": "response.output_item.added", "output_index": index, "item": {**item, "content": []}}
                empty = {**part, "text": ""}
                yield {"type": "response.content_part.added", **where, "content_index": 0, "part": empty}
                for piece in _pieces(part["text"]):
                    delta = {"delta": piece, "logprobs": []}
                    yield {"type": "response.output_text.delta", **where, "content_index": 0, **delta}
                text_done = {"text": part["text"], "logprobs": []}
                yield {"type": "response.output_text.done", **where, "content_index": 0, **text_done}
                yield {"type": "response.content_part.done", **where, "content_index": 0, "part": part}
            else:
                opening = {**item, "arguments": "", "status": "in_progress"}
                yield {"type": "response.output_item.added", "output_index": index, "item": opening}
                for piece in _pieces(item["arguments"]):
                    yield {"type": "response.function_call_arguments.delta", **where, "delta": piece}
                done = {"arguments": item["arguments"], "name": item["name"]}
                yield {"type": "response.function_call_arguments.done", **where, **done}
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        yield {"type": "response.completed", "response": _responses_object(call, response_id, output, reply)}

    def numbered() -> Iterator[dict[str, Any]]:
        for number, event in enumerate(events()):
            yield {**event, "sequence_number": number}

    response = _sse(numbered(), named=True)
    response.headers.update(headers)
    return response


# Anthropic Messages
def _anthropic_usage(reply: Reply, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": reply.input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def _anthropic_answer(call: LlmCall, reply: Reply) -> Response:
    message_id = _new_id("msg_")
    content: list[dict[str, Any]] = []
    if reply.text is not None or not reply.tool_calls:
        content.append({"type": "text", "text": reply.text or ""})
    for tc, tid in zip(reply.tool_calls, call.reply_tool_call_ids, strict=True):
        content.append({"type": "tool_use", "id": tid, "name": tc.name, "input": tc.arguments})
    stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    headers = {"request-id": _new_id("req_")}
    if not call.stream:
        body = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": call.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {**_anthropic_usage(reply, reply.output_tokens), "service_tier": "standard"},
        }
        return JSONResponse(body, headers=headers)

    def events() -> Iterator[dict[str, Any]]:
        message: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": call.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**_anthropic_usage(reply, 1), "service_tier": "standard"},
        }
        yield {"type": "message_start", "message": message}
        yield {"type": "ping"}
        for index, block in enumerate(content):
            if block["type"] == "text":
                yield {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
                for piece in _pieces(block["text"]):
                    delta = {"type": "text_delta", "text": piece}
                    yield {"type": "content_block_delta", "index": index, "delta": delta}
            else:
                yield {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}}
                for piece in ["", *_pieces(json.dumps(block["input"], separators=(",", ":")))]:
                    delta = {"type": "input_json_delta", "partial_json": piece}
                    yield {"type": "content_block_delta", "index": index, "delta": delta}
            yield {"type": "content_block_stop", "index": index}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": _anthropic_usage(reply, reply.output_tokens),
        }
        yield {"type": "message_stop"}

    response = _sse(events(), named=True)
    response.headers.update(headers)
    return response


# --- pytest fixtures (import them into a conftest, as with tests.fakes.fixtures) ---------------------------------
@pytest.fixture(scope="session")
def llm_server() -> Iterator[LlmFake]:
    fake = LlmFake()
    with fake.serve():
        yield fake


@pytest.fixture
def llm_fake(llm_server: LlmFake) -> Iterator[LlmFake]:
    llm_server.reset()
    yield llm_server
    llm_server.cancel_delays()  # a slow reply left waiting must not hold up the next test or the server's shutdown
