"""The case page shows who investigated and the AI conversation: collapsed by default, prompts, tool calls, tokens.

A live Vigil runs the investigation against the loopback provider fake (OpenAI Chat wire); Chromium reads the page.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.fakes.llm import ErrorReply, LlmFake, Reply, ToolCall, llm_fake, llm_server
from tests.support.console import ConsoleStack, screenshot, sign_in
from tests.support.llm import DRAFT, MODEL, RELATED, RELATED_TOOL, VERDICT, final, llm_settings
from vigil.ai.transcript import Exchange, ExchangeKind, Stage
from vigil.console.pages.ai_conversation import conversation, investigated_by

__all__ = ["llm_fake", "llm_server"]

#: Attacker-written text in the alert: it must reach the page as text, never as markup.
MARKUP = "<img src=x onerror=alert(1)>"
SIGN_IN = json.dumps(
    {"userPrincipalName": "jdoe@acme.example", "ipAddress": "203.0.113.7", "result": "success", "userAgent": MARKUP}
)


@pytest.fixture
def stack(db_url: str, tmp_path: Path, llm_fake: LlmFake) -> Iterator[ConsoleStack]:
    """This module's Vigil investigates with the fake model (overrides the package's stack)."""
    settings = llm_settings(db_url, tmp_path, llm_fake)
    with ConsoleStack(settings) as running:
        yield running


def investigated_case(stack: ConsoleStack, timeout: float = 60) -> str:
    stack.add_org("ACME", "Acme Corp")
    key = stack.add_key("ACME").api_key
    alert = stack.post_alert(
        key,
        {
            "organization_code": "ACME",
            "alert_provider": "okta",
            "alert_type": "Suspicious sign-in",
            "alert_content": SIGN_IN,
        },
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alert = httpx.get(
            f"{stack.url}/serviceapi/alerts/{alert['alert_id']}", headers={"Authorization": f"Bearer {key}"}, timeout=10
        ).json()
        assert alert["investigation_status"] != 20, alert
        if alert["investigation_status"] == 15 and alert["case_id"]:
            return str(alert["case_id"])
        time.sleep(0.2)
    raise AssertionError(f"investigation did not complete: {alert}")


def test_case_page_shows_the_ai_conversation_collapsed_with_prompts_tool_calls_and_tokens(
    page: Page, stack: ConsoleStack, llm_fake: LlmFake
) -> None:
    llm_fake.script(
        final(DRAFT, 900, 60),
        Reply(tool_calls=(ToolCall(RELATED_TOOL, {}),), input_tokens=1100, output_tokens=25),
        final(VERDICT, 1500, 90),
    )
    case_id = investigated_case(stack)
    assert llm_fake.usage_totals() == (3500, 175)
    sign_in(page, stack.url)

    page.goto(f"/cases/{case_id}")

    expect(page.locator("dd.investigated-by")).to_have_text(MODEL)
    expect(page.locator(".ai-fallback")).to_have_count(0)
    conversation = page.locator("#ai-conversation")
    assert conversation.evaluate("details => details.open") is False
    expect(conversation.locator("summary").first).to_contain_text(
        "3 model requests · 1 tool call · 3,500 input and 175 output tokens"
    )
    expect(page.get_by_text("Decide the disposition now.")).to_be_hidden()

    conversation.locator("summary").first.click()

    assert conversation.evaluate("details => details.open") is True
    rows = conversation.locator("details.ai-exchange")
    expect(rows).to_have_count(4)
    draft, ask, tool, answer = (rows.nth(i) for i in range(4))
    # Model requests: stage, model, tokens; the instructions once, the prompt, the response's tool call.
    expect(draft.locator("summary")).to_contain_text("Drafting")
    expect(draft.locator("summary")).to_contain_text(MODEL)
    expect(draft.locator("summary")).to_contain_text("900 in / 60 out tokens")
    expect(draft.locator("pre.ai-instructions")).to_contain_text("writing an investigation playbook")
    expect(draft.locator("pre.ai-prompt")).to_contain_text("Draft the playbook now.")
    expect(draft.locator("pre.ai-prompt")).to_be_visible()
    expect(ask.locator("summary")).to_contain_text("Analysis")
    expect(ask.locator("summary")).to_contain_text("1,100 in / 25 out tokens")
    expect(ask.locator("pre.ai-prompt")).to_contain_text("Decide the disposition now.")
    expect(ask.get_by_text(f"Model: Tool call · {RELATED_TOOL}")).to_be_visible()
    # The tool call: the skill, its inputs and its output.
    expect(tool.locator("summary")).to_contain_text("Look up related alerts")  # the console shows display names
    expect(tool.locator("summary")).to_contain_text(f"tool {RELATED_TOOL}")
    expect(tool.locator("pre.ai-inputs")).to_have_text("{}")
    expect(tool.locator("pre.ai-output")).to_contain_text('"count": 0')
    expect(tool.locator("pre.ai-output")).to_be_visible()
    # The last request sends the tool's result back; the instructions are not repeated; the final answer as JSON.
    expect(answer.locator("pre.ai-tool-result")).to_contain_text(f"output of skill {RELATED}")
    expect(answer.locator("pre.ai-instructions")).to_have_count(0)
    expect(answer.get_by_text("The same as in #2.")).to_be_visible()
    expect(answer.locator("summary")).to_contain_text("1,500 in / 90 out tokens")
    expect(answer.locator("pre.ai-tool-call")).to_contain_text('"disposition": "true_positive"')
    # The alert's markup reaches the page as text inside the prompt, never as an element.
    expect(draft.locator("pre.ai-prompt")).to_contain_text(MARKUP)
    expect(conversation.locator("img")).to_have_count(0)
    screenshot(page, "case-ai-conversation")


def test_case_page_says_when_the_built_in_analyst_finished_for_the_model(
    page: Page, stack: ConsoleStack, llm_fake: LlmFake
) -> None:
    llm_fake.script(ErrorReply(401, "Incorrect API key provided"), ErrorReply(401, "Incorrect API key provided"))
    case_id = investigated_case(stack)
    sign_in(page, stack.url)

    page.goto(f"/cases/{case_id}")

    expect(page.locator("dd.investigated-by")).to_have_text("Built-in analyst")
    notice = page.locator(".ai-fallback")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("The built-in analyst finished this investigation:")
    expect(notice).to_contain_text(f"{MODEL} could not finish (authentication)")
    conversation = page.locator("#ai-conversation")
    expect(conversation.locator("summary").first).to_contain_text("2 model requests · 0 tool calls")
    conversation.locator("summary").first.click()
    failed = conversation.locator("details.ai-exchange.ai-status-error")
    expect(failed).to_have_count(2)
    expect(failed.first.locator("summary")).to_contain_text("Authentication")
    expect(failed.first.locator(".ai-error")).to_contain_text("Incorrect API key provided")


def test_conversation_rows_show_refusals_retries_repairs_and_unknown_parts_as_they_were() -> None:
    """The view-model on stored shapes the engine writes less often: nothing is dropped, nothing crashes."""
    instructions = "You are a senior SOC analyst."
    exchanges = [
        Exchange(
            kind=ExchangeKind.MODEL,
            stage=Stage.ANALYZE,
            model=MODEL,
            request=[
                {
                    "kind": "request",
                    "instructions": instructions,
                    "parts": [
                        {"part_kind": "retry-prompt", "content": "severity: required", "tool_name": "final_result"},
                        {"part_kind": "retry-prompt", "content": [{"loc": ["x"], "msg": "bad"}], "tool_name": None},
                        {
                            "part_kind": "tool-return",
                            "tool_name": "final_result",
                            "content": "confidence: too high",
                            "tool_call_id": "c1",
                            "outcome": "retried",
                        },
                        {"part_kind": "retry-feedback", "content": "Answer with the tool.", "retry": {"cause": "x"}},
                        {"part_kind": "something-new", "content": "kept"},
                    ],
                }
            ],
            response=[{"kind": "response", "parts": [{"part_kind": "text", "content": "Thinking aloud"}]}],
            retries=["rate_limit after 0.1 s: ModelHTTPError: 429"],
            input_tokens=10,
            output_tokens=2,
            cost_usd=0.00001,
            started_at=1_795_287_840.5,
        ),
        Exchange(
            kind=ExchangeKind.TOOL,
            stage=Stage.ANALYZE,
            model="vigil",
            request={"tool": "isolate_machine", "skill_id": None, "inputs": {"machine_id": "m1"}},
            error="Refused: 'isolate_machine' is not one of the read-only tools offered; nothing was run.",
            error_kind="refused",
            started_at=1_795_287_841.0,
        ),
        Exchange(kind=ExchangeKind.MODEL, stage=Stage.DRAFT, model=MODEL, request="not a list", started_at=1.0),
    ]

    built = conversation(exchanges)

    model, refused, odd = built.rows
    assert built.summary == "2 model requests · 1 tool call · 10 input and 2 output tokens · about < $0.0001"
    assert [(p.label, p.style) for p in model.sent] == [
        ("Instructions", "instructions"),
        ("Retry prompt · final_result", "retry"),
        ("Retry prompt", "retry"),
        ("Retry prompt · final_result", "retry"),
        ("Retry prompt", "retry"),
        ("Something new", "other"),
    ]
    assert '"msg": "bad"' in model.sent[2].body and '"kept"' in model.sent[5].body
    assert (model.sent[3].body, model.sent[3].note) == ("confidence: too high", "call c1")
    assert [(p.label, p.body) for p in model.received] == [("Text", "Thinking aloud")]
    assert model.retries == ["rate_limit after 0.1 s: ModelHTTPError: 429"] and model.started_at == 1_795_287_840
    assert (refused.status, refused.status_label, refused.title) == ("refused", "Refused", "isolate_machine")
    assert refused.subtitle == "a tool the model was not offered" and refused.received == []
    assert refused.sent[0].body == '{\n  "machine_id": "m1"\n}'
    assert (odd.stage, odd.sent[0].label, odd.sent[0].body, odd.received) == ("Drafting", "Request", "not a list", [])
    assert investigated_by("builtin") == "Built-in analyst" and investigated_by(MODEL) == MODEL
    assert investigated_by(None) == ""
