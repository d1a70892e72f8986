"""LLM investigations through the durable engine against the loopback provider fake (OpenAI Chat wire)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine.conftest import engine_settings
from tests.fakes.llm import OPENAI_KEY, LlmCall, LlmFake, Reply, ToolCall
from tests.support.harness import Harness

MODEL = "openai-chat:gpt-test"
RELATED = "Look up related alerts"


def llm_settings(db_url: str, tmp_path: Path, fake: LlmFake, **overrides: Any) -> Any:
    values: dict[str, Any] = {
        "ai_model": MODEL,
        "ai_base_url": fake.openai_base_url,
        "ai_api_key": OPENAI_KEY,
        "ai_retry_backoff_seconds": 0.05,
        "ai_request_timeout_seconds": 5.0,
    }
    values.update(overrides)
    return engine_settings(db_url, tmp_path, **values)


@pytest.fixture
def llm_harness(db_url: str, tmp_path: Path, llm_fake: LlmFake) -> Iterator[Harness]:
    with Harness(llm_settings(db_url, tmp_path, llm_fake), engine=True) as harness:
        yield harness


def final(arguments: dict[str, Any], *, input_tokens: int = 100, output_tokens: int = 20) -> Reply:
    return Reply(
        tool_calls=(ToolCall("final_result", arguments),), input_tokens=input_tokens, output_tokens=output_tokens
    )


DRAFT = {
    "steps": [{"kind": "skill", "name": "Related alerts", "skill": RELATED, "inputs": {}}],
    "rationale": "Repeated sign-ins from one address show whether this is a campaign.",
}
VERDICT = {
    "disposition": "true_positive",
    "severity": "high",
    "confidence": 0.8,
    "summary": "jdoe@acme.example signed in from 203.0.113.7, a known bad address.",
    "key_findings": ["Sign-in from 203.0.113.7"],
    "recommended_actions": ["Reset the password of jdoe@acme.example"],
    "evidence": [{"step": "alert", "quote": "203.0.113.7", "finding": "the sign-in address"}],
    "decisive_entities": ["jdoe@acme.example"],
}
SIGN_IN = json.dumps({"userPrincipalName": "jdoe@acme.example", "ipAddress": "203.0.113.7", "result": "success"})


def is_draft(call: LlmCall) -> bool:
    return "Draft the playbook now." in call.user_text


def post(
    harness: Harness, alert_type: str = "Suspicious sign-in", content: str = SIGN_IN
) -> tuple[str, dict[str, Any]]:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    assert (
        harness.post_alert(
            key, harness.alert_body(provider="okta", alert_type=alert_type, alert_content=content)
        ).status_code
        == 201
    )
    (alert,) = harness.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] in (15, 20))
    return key, alert


def case_of(harness: Harness, key: str, alert: dict[str, Any]) -> dict[str, Any]:
    response = harness.client.get(f"/serviceapi/cases/{alert['case_id']}", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_model_drafts_the_playbook_and_writes_the_verdict(llm_harness: Harness, llm_fake: LlmFake) -> None:
    llm_fake.script(
        final(DRAFT, input_tokens=900, output_tokens=60), final(VERDICT, input_tokens=1200, output_tokens=90)
    )

    key, alert = post(llm_harness)

    assert alert["investigation_status"] == 15, alert
    case = case_of(llm_harness, key, alert)
    assert case["disposition"] == "pending" and case["ai_disposition"] == "true_positive"
    assert case["severity"] == "high"
    assert case["summary"] == VERDICT["summary"]
    assert len(llm_fake.calls) == 2
    assert is_draft(llm_fake.calls[0]) and not is_draft(llm_fake.calls[1])
