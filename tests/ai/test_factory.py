"""Choosing the investigator from VIGIL_AI_MODEL."""

from __future__ import annotations

import pytest

from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.errors import UnsupportedModelError
from vigil.ai.factory import get_investigator
from vigil.ai.investigator import Investigator


@pytest.mark.parametrize("model", ["builtin", " Builtin "])
def test_builtin_model_gives_the_rule_based_analyst(model: str) -> None:
    investigator: Investigator = get_investigator(model)

    assert isinstance(investigator, BuiltinInvestigator)


@pytest.mark.parametrize("model", ["openai:gpt-4o", "anthropic:claude-sonnet-4", ""])
def test_llm_models_raise_a_typed_error_until_they_are_supported(model: str) -> None:
    with pytest.raises(UnsupportedModelError) as raised:
        get_investigator(model)

    assert raised.value.code == "unsupported_ai_model"
    assert raised.value.model == model
    assert "later release" in str(raised.value)
