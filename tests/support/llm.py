"""The shared script of an LLM investigation against the provider fake: settings, a draft, a verdict, replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.engine.conftest import engine_settings
from tests.fakes.llm import OPENAI_KEY, LlmCall, LlmFake, Reply, ToolCall
from vigil.settings import Settings

MODEL = "openai-chat:gpt-test"
RELATED = "vigil.related_alerts"
RELATED_TOOL = "vigil_related_alerts"
SIGN_IN = json.dumps({"userPrincipalName": "jdoe@acme.example", "ipAddress": "203.0.113.7", "result": "success"})
DRAFT: dict[str, Any] = {
    "steps": [{"kind": "skill", "name": "Related alerts", "skill": RELATED, "inputs": {}}],
    "rationale": "Repeated sign-ins from one address show whether this is a campaign.",
}
VERDICT: dict[str, Any] = {
    "disposition": "true_positive",
    "severity": "high",
    "confidence": 0.8,
    "summary": "jdoe@acme.example signed in from 203.0.113.7, a known bad address.",
    "key_findings": ["Sign-in from 203.0.113.7"],
    "recommended_actions": ["Reset the password of jdoe@acme.example"],
    "evidence": [{"step": "alert", "quote": "203.0.113.7", "finding": "the sign-in address"}],
    "decisive_entities": ["jdoe@acme.example"],
}


def llm_settings(db_url: str, tmp_path: Path, fake: LlmFake, **overrides: Any) -> Settings:
    """Engine settings whose investigator is the fake's model, with quick retries."""
    values: dict[str, Any] = {
        "ai_model": MODEL,
        "ai_base_url": fake.openai_base_url,
        "ai_api_key": OPENAI_KEY,
        "ai_retry_backoff_seconds": 0.05,
        "ai_request_timeout_seconds": 5.0,
    }
    values.update(overrides)
    return engine_settings(db_url, tmp_path, **values)


def final(arguments: dict[str, Any], input_tokens: int = 100, output_tokens: int = 20) -> Reply:
    """The model's structured answer (pydantic-ai's `final_result` output tool)."""
    return Reply(
        tool_calls=(ToolCall("final_result", arguments),), input_tokens=input_tokens, output_tokens=output_tokens
    )


def is_draft(call: LlmCall) -> bool:
    return "Draft the playbook now." in call.user_text
