"""The LLM provider fake speaks the three wire formats as pydantic-ai's own clients expect them (reference F).

Every wire is driven through pydantic-ai (and the openai / anthropic SDKs under it), not hand-written HTTP; only the
protocol checks that pydantic-ai never trips by itself are shown with raw requests.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from anthropic import AsyncAnthropic
from openai import AsyncOpenAI
from pydantic import BaseModel
from pydantic_ai import Agent, ModelHTTPError
from pydantic_ai.exceptions import ModelAuthenticationError, ModelRateLimitError, ModelTimeoutError
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings

from tests.fakes.llm import (
    ANTHROPIC_KEY,
    NO_REPLY_LEFT,
    OPENAI_KEY,
    ErrorReply,
    LlmCall,
    LlmFake,
    Reply,
    ToolCall,
    llm_fake,
    llm_server,
)

__all__ = ["llm_fake", "llm_server"]

WIRES = ["chat", "responses", "anthropic"]
CLAUDE = "claude-sonnet-4-6"  # its maximum output (128k) is above the SDK's non-streaming limit: pydantic-ai streams


class Verdict(BaseModel):
    disposition: str
    confidence: float


def model_for(
    fake: LlmFake, wire: str, *, openai_key: str = OPENAI_KEY, anthropic_key: str = ANTHROPIC_KEY, retries: int = 2
) -> Model:
    """A pydantic-ai model of ``wire`` pointed at the fake, its SDK client retrying ``retries`` times."""
    if wire == "anthropic":
        client = AsyncAnthropic(base_url=fake.anthropic_base_url, api_key=anthropic_key, max_retries=retries)
        return AnthropicModel(CLAUDE, provider=AnthropicProvider(anthropic_client=client))
    openai = AsyncOpenAI(base_url=fake.openai_base_url, api_key=openai_key, max_retries=retries)
    provider = OpenAIProvider(openai_client=openai)
    if wire == "chat":
        return OpenAIChatModel("gpt-test", provider=provider)
    return OpenAIResponsesModel("gpt-test", provider=provider)


def triage_agent(model: Model) -> Agent[None, Verdict]:
    agent = Agent(model, output_type=Verdict, instructions="You are a SOC analyst.")

    @agent.tool_plain
    def lookup_host(hostname: str) -> str:
        """Look a host up in the inventory."""
        return f"{hostname}: healthy, patched"

    return agent


LOOKUP = Reply(
    text="Checking the host.",
    tool_calls=(ToolCall("lookup_host", {"hostname": "web-1"}),),
    input_tokens=120,
    output_tokens=15,
)
VERDICT = Reply(
    tool_calls=(ToolCall("final_result", {"disposition": "benign", "confidence": 0.9}),),
    input_tokens=180,
    output_tokens=25,
)


@pytest.mark.parametrize("wire", WIRES)
def test_an_agent_calls_a_tool_then_answers_with_structured_output(llm_fake: LlmFake, wire: str) -> None:
    llm_fake.script(LOOKUP, VERDICT)

    result = triage_agent(model_for(llm_fake, wire)).run_sync("Investigate alert 1")

    assert result.output == Verdict(disposition="benign", confidence=0.9)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (300, 40) == llm_fake.usage_totals()
    assert result.usage.requests == 2
    first, second = llm_fake.calls
    assert {call.wire for call in llm_fake.calls} == {wire}
    assert first.tool_names == ["lookup_host", "final_result"]  # pydantic-ai's default output mode: a tool
    assert first.tools[0]["description"] == "Look a host up in the inventory."
    assert first.tools[1]["parameters"]["required"] == ["disposition", "confidence"]
    assert first.system.endswith("You are a SOC analyst.")  # Sonnet 4.6 gets pydantic-ai's framing note first
    assert first.user_text == "Investigate alert 1"
    assert first.tool_result_ids == []
    (call_id,) = first.reply_tool_call_ids
    assert call_id.startswith("toolu_" if wire == "anthropic" else "call_")
    assert second.tool_result_ids == [call_id]
    assert second.tool_result(call_id) == "web-1: healthy, patched"
    assistant = second.messages[1]
    assert assistant["content"] == "Checking the host."
    assert assistant["tool_calls"] == [{"id": call_id, "name": "lookup_host", "arguments": {"hostname": "web-1"}}]
    assert first.stream is (wire == "anthropic")
    assert llm_fake.remaining == 0


def test_anthropic_answers_without_streaming_when_max_tokens_is_small(llm_fake: LlmFake) -> None:
    llm_fake.script(LOOKUP, VERDICT)
    settings = ModelSettings(max_tokens=1024)

    result = triage_agent(model_for(llm_fake, "anthropic")).run_sync("Investigate alert 1", model_settings=settings)

    assert result.output.disposition == "benign"
    assert [call.stream for call in llm_fake.calls] == [False, False]
    assert [call.body["max_tokens"] for call in llm_fake.calls] == [1024, 1024]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (300, 40)


@pytest.mark.parametrize("wire", WIRES)
def test_streamed_runs_get_server_sent_events(llm_fake: LlmFake, wire: str) -> None:
    text_agent = Agent(model_for(llm_fake, wire), instructions="Summarise.")
    llm_fake.script(Reply(text="The alert is a false positive raised by a backup job.", output_tokens=11))

    with text_agent.run_stream_sync("Summarise alert 1") as streamed:
        output = streamed.get_output()
        usage = streamed.usage

    assert output == "The alert is a false positive raised by a backup job."
    assert (usage.input_tokens, usage.output_tokens) == (100, 11)
    (call,) = llm_fake.calls
    assert call.stream
    if wire == "chat":
        assert call.body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("wire", WIRES)
def test_a_streamed_tool_call_reaches_the_agent(llm_fake: LlmFake, wire: str) -> None:
    llm_fake.script(LOOKUP, VERDICT)

    with triage_agent(model_for(llm_fake, wire)).run_stream_sync("Investigate alert 1") as streamed:
        output = streamed.get_output()

    assert output == Verdict(disposition="benign", confidence=0.9)
    assert llm_fake.calls[1].tool_result(llm_fake.calls[0].reply_tool_call_ids[0]) == "web-1: healthy, patched"


@pytest.mark.parametrize("wire", WIRES)
def test_a_responder_answers_from_what_the_client_sent(llm_fake: LlmFake, wire: str) -> None:
    def responder(call: LlmCall) -> Reply:
        if not call.tool_results:
            return Reply(tool_calls=(ToolCall("lookup_host", {"hostname": "db-7"}, id="call_fixed_1"),))
        if "patched" in call.tool_results[-1]["content"]:
            return Reply(tool_calls=(ToolCall("final_result", {"disposition": "benign", "confidence": 0.5}),))
        return Reply(tool_calls=(ToolCall("final_result", {"disposition": "malicious", "confidence": 0.5}),))

    llm_fake.respond_with(responder)

    result = triage_agent(model_for(llm_fake, wire)).run_sync("Investigate alert 2")

    assert result.output.disposition == "benign"
    assert llm_fake.calls[1].tool_result_ids == ["call_fixed_1"]


@pytest.mark.parametrize("wire", WIRES)
def test_a_scripted_call_to_an_unknown_tool_is_sent_and_pydantic_ai_asks_again(llm_fake: LlmFake, wire: str) -> None:
    llm_fake.script(Reply(tool_calls=(ToolCall("delete_everything", {}),)), VERDICT)

    result = triage_agent(model_for(llm_fake, wire)).run_sync("Investigate alert 3")

    assert result.output.disposition == "benign"
    (call_id,) = llm_fake.calls[0].reply_tool_call_ids
    retry_prompt = llm_fake.calls[1].tool_result(call_id)
    assert retry_prompt is not None
    assert "delete_everything" in retry_prompt


@pytest.mark.parametrize("wire", WIRES)
def test_a_wrong_key_is_an_authentication_error(llm_fake: LlmFake, wire: str) -> None:
    llm_fake.script(VERDICT)
    model = model_for(llm_fake, wire, openai_key="sk-wrong", anthropic_key="sk-ant-wrong")

    with pytest.raises(ModelAuthenticationError) as raised:
        triage_agent(model).run_sync("Investigate alert 1")

    assert isinstance(raised.value, ModelHTTPError)
    assert raised.value.status_code == 401
    if wire == "anthropic":
        assert raised.value.body == {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        }
    else:
        assert isinstance(raised.value.body, dict)
        assert raised.value.body["code"] == "invalid_api_key"
        assert raised.value.body["type"] == "invalid_request_error"
    assert llm_fake.calls == []  # refused before it was read
    assert llm_fake.remaining == 1


@pytest.mark.parametrize("wire", WIRES)
def test_a_429_without_sdk_retries_surfaces_as_a_rate_limit(llm_fake: LlmFake, wire: str) -> None:
    llm_fake.script(ErrorReply(429, "Slow down", retry_after=7))

    with pytest.raises(ModelHTTPError) as raised:
        triage_agent(model_for(llm_fake, wire, retries=0)).run_sync("Investigate alert 1")

    assert raised.value.status_code == 429
    assert isinstance(raised.value, ModelRateLimitError)
    assert raised.value.headers is not None
    assert raised.value.headers["retry-after"] == "7"
    assert llm_fake.usage_totals() == (0, 0)
    body = raised.value.body
    assert isinstance(body, dict)
    if wire == "anthropic":
        assert body == {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    else:
        assert body["message"] == "Slow down"
        assert body["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize("wire", WIRES)
def test_the_sdk_retries_a_server_error_invisibly(llm_fake: LlmFake, wire: str) -> None:
    llm_fake.script(ErrorReply(503, "overloaded", retry_after=0.01), VERDICT)

    result = triage_agent(model_for(llm_fake, wire)).run_sync("Investigate alert 1")

    assert result.output.disposition == "benign"
    assert len(llm_fake.calls) == 2
    assert result.usage.requests == 1


@pytest.mark.parametrize("wire", WIRES)
def test_an_unscripted_model_call_fails_loudly(llm_fake: LlmFake, wire: str) -> None:
    with pytest.raises(ModelHTTPError) as raised:
        triage_agent(model_for(llm_fake, wire, retries=0)).run_sync("Investigate alert 1")

    assert raised.value.status_code == 500
    assert NO_REPLY_LEFT in str(raised.value.body)


@pytest.mark.parametrize("wire", WIRES)
def test_a_slow_reply_trips_the_client_timeout(llm_fake: LlmFake, wire: str) -> None:
    llm_fake.script(Reply(text="too late", delay_seconds=5))
    agent = Agent(model_for(llm_fake, wire, retries=0))

    with pytest.raises(ModelTimeoutError):
        agent.run_sync("Hello", model_settings=ModelSettings(timeout=0.3))

    assert len(llm_fake.calls) == 1


@pytest.mark.parametrize("wire", ["chat", "responses"])
def test_openai_refuses_a_tool_name_with_a_dot(llm_fake: LlmFake, wire: str) -> None:
    agent = Agent(model_for(llm_fake, wire, retries=0))

    @agent.tool_plain(name="microsoft_defender.list_machines")
    def list_machines() -> str:
        return "[]"

    llm_fake.script(Reply(text="unused"))

    with pytest.raises(ModelHTTPError) as raised:
        agent.run_sync("List machines")

    assert raised.value.status_code == 400
    assert "does not match pattern" in str(raised.value.body)
    assert llm_fake.remaining == 1


# --- protocol checks pydantic-ai never trips itself, shown with raw requests ---------------------------------------
def post(fake: LlmFake, wire: str, body: dict[str, object]) -> httpx.Response:
    if wire == "anthropic":
        headers = {"x-api-key": ANTHROPIC_KEY, "anthropic-version": "2023-06-01"}
        return httpx.post(f"{fake.url}/v1/messages", json={"max_tokens": 100, **body}, headers=headers)
    path = "/v1/chat/completions" if wire == "chat" else "/v1/responses"
    return httpx.post(fake.url + path, json=body, headers={"Authorization": f"Bearer {OPENAI_KEY}"})


def unanswered(wire: str) -> dict[str, object]:
    """A history whose assistant turn called a tool that got no result."""
    if wire == "chat":
        call = {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call]}]
        return {"model": "m", "messages": messages}
    if wire == "responses":
        call = {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": "{}"}
        return {"model": "m", "input": [{"role": "user", "content": "hi"}, call]}
    use = {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [use]}]}


def orphan_result(wire: str) -> dict[str, object]:
    """A tool result for a call no assistant turn made."""
    if wire == "chat":
        messages = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_9", "content": "x"}]
        return {"model": "m", "messages": messages}
    if wire == "responses":
        output = {"type": "function_call_output", "call_id": "call_9", "output": "x"}
        return {"model": "m", "input": [{"role": "user", "content": "hi"}, output]}
    result = {"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}
    return {"model": "m", "messages": [{"role": "user", "content": [result]}]}


@pytest.mark.parametrize("history", [unanswered, orphan_result])
@pytest.mark.parametrize("wire", WIRES)
def test_tool_calls_and_results_must_pair_up(
    llm_fake: LlmFake, wire: str, history: Callable[[str], dict[str, object]]
) -> None:
    llm_fake.script(Reply(text="unused"))

    response = post(llm_fake, wire, {**history(wire), "some_future_field": {"ignored": True}})

    assert response.status_code == 400
    body = response.json()
    if wire == "anthropic":
        assert body["type"] == "error"
        assert body["error"]["type"] == "invalid_request_error"
    else:
        assert body["error"]["type"] == "invalid_request_error"
    assert llm_fake.remaining == 1  # a refused request uses no scripted reply
    assert isinstance(llm_fake.calls[0].reply, ErrorReply)


def test_anthropic_requires_its_version_header(llm_fake: LlmFake) -> None:
    response = httpx.post(
        f"{llm_fake.url}/v1/messages",
        json={"model": CLAUDE, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]},
        headers={"x-api-key": ANTHROPIC_KEY},
    )

    assert response.status_code == 400
    assert response.json()["error"] == {
        "type": "invalid_request_error",
        "message": "anthropic-version: header is required",
    }
