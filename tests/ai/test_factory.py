"""Choosing the investigator from VIGIL_AI_MODEL (or an organization's override)."""

from __future__ import annotations

import pytest

from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.errors import UnsupportedModelError
from vigil.ai.factory import get_investigator
from vigil.ai.investigator import Investigator
from vigil.ai.llm.investigator import LlmInvestigator
from vigil.ai.organization_model import choice


@pytest.mark.parametrize("model", ["builtin", " Builtin "])
def test_builtin_model_gives_the_rule_based_analyst(model: str) -> None:
    investigator: Investigator = get_investigator(choice(model, None, None))

    assert isinstance(investigator, BuiltinInvestigator)


@pytest.mark.parametrize(
    ("model", "base_url", "key"),
    [
        ("openai:gpt-4.1", None, "sk-test"),
        ("openai-chat:llama3", "http://127.0.0.1:9/v1", None),  # a local server needs no key
        ("anthropic:claude-sonnet-4-5", None, "sk-ant-test"),
    ],
)
def test_pydantic_ai_model_strings_give_an_llm_investigator(model: str, base_url: str | None, key: str | None) -> None:
    investigator = get_investigator(choice(model, base_url, key))

    assert isinstance(investigator, LlmInvestigator)
    assert investigator.model == model
    investigator.close()


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("gpt-4o", "Unknown model"),  # no provider prefix
        ("test", "Unknown model"),  # pydantic-ai's offline test model is no investigator
        ("nosuchprovider:x", "Unknown provider"),
        ("", "Unknown model"),
    ],
)
def test_unusable_models_raise_a_typed_error(model: str, reason: str) -> None:
    with pytest.raises(UnsupportedModelError) as raised:
        get_investigator(choice(model, None, None))

    assert raised.value.code == "unsupported_ai_model"
    assert reason in str(raised.value)


def test_a_hosted_model_without_a_key_is_refused_and_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for model in ("openai:gpt-4.1", "anthropic:claude-sonnet-4-5"):
        with pytest.raises(UnsupportedModelError) as raised:
            get_investigator(choice(model, None, None))
        assert "VIGIL_AI_API_KEY" in str(raised.value)


def test_the_key_never_appears_in_a_choice_repr() -> None:
    secret = "sk-live-do-not-print"
    assert secret not in repr(choice("openai:gpt-4.1", None, secret))


def test_a_base_url_never_receives_the_environments_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local server (or an organization's own URL) gets its own key or none, never OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-service-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-service-key")
    local = get_investigator(choice("openai-chat:llama3", "http://127.0.0.1:9/v1", None))
    assert isinstance(local, LlmInvestigator)
    local.close()
    with pytest.raises(UnsupportedModelError):
        get_investigator(choice("anthropic:claude-sonnet-4-5", "http://127.0.0.1:9", None))
