"""The case API carries the AI trail: every prompt, tool call, model response, token count and cost estimate.

A real investigation runs through the durable engine against the loopback provider fake (OpenAI Chat wire): the
model drafts the playbook, asks one follow-up question (the read-only skill `vigil.related_alerts`, "Look up related
alerts") and answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine.conftest import engine_settings
from tests.fakes.llm import ErrorReply, LlmFake, Reply, ToolCall, llm_fake, llm_server
from tests.support.harness import Harness
from tests.support.llm import DRAFT, MODEL, RELATED, RELATED_TOOL, SIGN_IN, VERDICT, final, llm_settings
from vigil.ai.transcript import Exchange
from vigil.console.pages.ai_conversation import conversation

__all__ = ["llm_fake", "llm_server"]


def script_investigation_with_a_follow_up(fake: LlmFake) -> None:
    """Draft; then the analysis asks the related-alerts tool before answering (usage differs per reply)."""
    fake.script(
        final(DRAFT, 900, 60),
        Reply(tool_calls=(ToolCall(RELATED_TOOL, {}),), input_tokens=1100, output_tokens=25),
        final(VERDICT, 1500, 90),
    )


@pytest.fixture
def llm_harness(db_url: str, tmp_path: Path, llm_fake: LlmFake) -> Iterator[Harness]:
    settings = llm_settings(db_url, tmp_path, llm_fake)
    with Harness(settings, engine=True) as harness:
        yield harness


def investigate(harness: Harness) -> tuple[str, dict[str, Any]]:
    """Post one sign-in alert, wait for its case; returns the key and the case detail."""
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    body = harness.alert_body(provider="okta", alert_type="Suspicious sign-in", alert_content=SIGN_IN)
    assert harness.post_alert(key, body).status_code == 201
    (alert,) = harness.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] in (15, 20))
    assert alert["investigation_status"] == 15, alert
    response = harness.client.get(f"/serviceapi/cases/{alert['case_id']}", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.text
    return key, dict(response.json())


def parts(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [part for message in messages for part in message["parts"] if part["part_kind"] == kind]


def test_case_api_shows_prompts_tool_calls_responses_and_token_totals(llm_harness: Harness, llm_fake: LlmFake) -> None:
    script_investigation_with_a_follow_up(llm_fake)

    _, case = investigate(llm_harness)

    assert case["ai_model"] == MODEL and case["ai_fallback_reason"] is None
    trail = case["ai"]
    exchanges = trail["exchanges"]
    assert [(e["stage"], e["kind"]) for e in exchanges] == [
        ("draft", "model"),
        ("analyze", "model"),
        ("analyze", "tool"),
        ("analyze", "model"),
    ]
    input_tokens, output_tokens = llm_fake.usage_totals()
    assert (input_tokens, output_tokens) == (900 + 1100 + 1500, 60 + 25 + 90)
    assert trail["totals"] == {
        "model_requests": 3,
        "tool_calls": 1,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": None,  # an unpriced test model: no estimate rather than a wrong one
    }
    assert [(e["input_tokens"], e["output_tokens"]) for e in exchanges] == [(900, 60), (1100, 25), (0, 0), (1500, 90)]
    draft, ask, tool, answer = exchanges

    # The prompts: instructions and the user prompt, the alert content fenced inside it.
    (prompt,) = parts(draft["request"], "user-prompt")
    assert "Draft the playbook now." in prompt["content"] and "203.0.113.7" in prompt["content"]
    assert "senior SOC analyst" in draft["request"][0]["instructions"]
    (analysis_prompt,) = parts(ask["request"], "user-prompt")
    assert "Decide the disposition now." in analysis_prompt["content"]
    assert analysis_prompt["content"] == llm_fake.calls[1].user_text

    # The model's responses: the follow-up tool call, then the final answer.
    (follow_up,) = parts(ask["response"], "tool-call")
    assert follow_up["tool_name"] == RELATED_TOOL
    (verdict,) = parts(answer["response"], "tool-call")
    assert verdict["tool_name"] == "final_result"
    args = verdict["args"]  # as the provider sent it: a JSON string (OpenAI) or an object
    assert (json.loads(args) if isinstance(args, str) else args) == VERDICT

    # The tool call: which skill, with which inputs, and what it returned; the result went back to the model.
    assert tool["model"] == "vigil"
    assert tool["request"] == {"tool": RELATED_TOOL, "skill_id": RELATED, "inputs": {}}
    assert tool["error"] is None and tool["response"]["count"] == 0 and tool["response"]["alerts"] == []
    (returned,) = parts(answer["request"], "tool-return")
    assert returned["tool_name"] == RELATED_TOOL and returned["tool_call_id"] == follow_up["tool_call_id"]
    assert f"output of skill {RELATED}" in returned["content"]
    assert llm_fake.calls[2].tool_result(follow_up["tool_call_id"]) == returned["content"]
    assert all(e["retries"] == [] and e["duration_ms"] >= 0 and e["started_at"] > 0 for e in exchanges)


def test_case_list_carries_the_model_but_not_the_conversation(llm_harness: Harness, llm_fake: LlmFake) -> None:
    script_investigation_with_a_follow_up(llm_fake)
    key, case = investigate(llm_harness)

    response = llm_harness.client.get("/serviceapi/cases", headers={"Authorization": f"Bearer {key}"})

    (listed,) = response.json()["cases"]
    assert listed["case_id"] == case["case_id"]
    assert listed["ai_model"] == MODEL and listed["ai_fallback_reason"] is None
    assert "ai" not in listed


def test_a_model_that_fails_leaves_its_failed_requests_and_the_fallback_reason_on_the_case(
    llm_harness: Harness, llm_fake: LlmFake
) -> None:
    llm_fake.script(ErrorReply(401, "Incorrect API key provided"), ErrorReply(401, "Incorrect API key provided"))

    _, case = investigate(llm_harness)

    assert case["ai_model"] == "builtin"
    assert case["ai_fallback_reason"] and "authentication" in case["ai_fallback_reason"]
    exchanges = case["ai"]["exchanges"]
    assert [(e["stage"], e["error_kind"]) for e in exchanges] == [
        ("draft", "authentication"),
        ("analyze", "authentication"),
    ]
    assert all(e["response"] is None and e["error"] and e["input_tokens"] == 0 for e in exchanges)
    assert case["ai"]["totals"]["model_requests"] == 2 and case["ai"]["totals"]["input_tokens"] == 0


def test_a_case_of_the_built_in_analyst_has_an_empty_ai_trail(db_url: str, tmp_path: Path) -> None:
    with Harness(engine_settings(db_url, tmp_path), engine=True) as harness:
        _, case = investigate(harness)

    assert case["ai_model"] == "builtin" and case["ai_fallback_reason"] is None
    assert case["ai"] == {
        "totals": {"model_requests": 0, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": None},
        "exchanges": [],
    }


def test_openapi_documents_the_ai_trail_of_a_case(harness: Harness) -> None:
    schemas = harness.client.get("/openapi.json").json()["components"]["schemas"]

    assert {"ai", "ai_model", "ai_fallback_reason"} <= set(schemas["CaseDetail"]["properties"])
    assert {"ai_model", "ai_fallback_reason"} <= set(schemas["CaseOut"]["properties"])
    for name in ("AiExchangeOut", "AiTotalsOut"):
        fields = schemas[name]["properties"]
        assert all("description" in field for field in fields.values()), name


def test_a_repaired_answer_keeps_the_invalid_answer_and_the_repair_prompt(
    llm_harness: Harness, llm_fake: LlmFake
) -> None:
    llm_fake.script(final(DRAFT, 900, 60), final({**VERDICT, "confidence": 5}, 1200, 80), final(VERDICT, 1400, 90))

    _, case = investigate(llm_harness)

    assert case["ai_model"] == MODEL and case["ai_fallback_reason"] is None
    _, invalid, repaired = case["ai"]["exchanges"]
    (bad,) = parts(invalid["response"], "tool-call")
    bad_args = json.loads(bad["args"]) if isinstance(bad["args"], str) else bad["args"]
    assert bad_args["confidence"] == 5
    (repair,) = [part for message in repaired["request"] for part in message["parts"]]
    assert repair["tool_call_id"] == bad["tool_call_id"] and "confidence" in repair["content"]
    assert case["ai"]["totals"]["input_tokens"] == llm_fake.usage_totals()[0] == 900 + 1200 + 1400
    # The case page labels it as what it is, whichever part pydantic-ai uses for a repair.
    shown = conversation([Exchange.model_validate(e) for e in case["ai"]["exchanges"]])
    assert [part.label for part in shown.rows[2].sent] == ["Instructions", "Retry prompt · final_result"]
