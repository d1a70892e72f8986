"""Turn a model string into a pydantic-ai model whose client has Vigil's timeout and no hidden retries.

The provider SDKs retry 429s and 5xx on their own, invisibly; Vigil turns that off (`max_retries=0`) and retries
itself, so every try, wait and give-up is recorded on the case.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model
from pydantic_ai.providers import Provider, infer_provider

from vigil.ai.errors import UnsupportedModelError
from vigil.ai.llm.config import OPENAI_PROVIDERS, ModelChoice

ANTHROPIC_PROVIDER = "anthropic"
#: Local OpenAI-compatible servers (vLLM, Ollama, LiteLLM) usually take no key; the SDK still insists on one.
NO_KEY = "not-needed"


def build_model(choice: ModelChoice, request_timeout_seconds: float) -> Model:
    """The pydantic-ai model for `choice`; an unknown provider or a missing key is `UnsupportedModelError`."""
    # The provider SDKs are imported here, not at module level: they are half of a `vigil serve` start's import time,
    # and a restart must serve within seconds (the default `builtin` investigator never needs them).
    from anthropic import AsyncAnthropic
    from openai import AsyncOpenAI
    from pydantic_ai.providers.anthropic import AnthropicProvider
    from pydantic_ai.providers.openai import OpenAIProvider

    key = choice.api_key.get_secret_value() if choice.api_key is not None else None

    def provider_for(name: str) -> Provider[Any]:
        if name in OPENAI_PROVIDERS:
            # With a base URL only its own key goes there: the environment's OpenAI key never leaves for another host.
            api_key = key or (NO_KEY if choice.base_url else os.environ.get("OPENAI_API_KEY"))
            if api_key is None:
                raise UnsupportedModelError(choice.model, "it needs VIGIL_AI_API_KEY (or OPENAI_API_KEY)")
            client = AsyncOpenAI(
                api_key=api_key, base_url=choice.base_url, timeout=request_timeout_seconds, max_retries=0
            )
            return OpenAIProvider(openai_client=client)
        if name == ANTHROPIC_PROVIDER:
            api_key = key or (None if choice.base_url else os.environ.get("ANTHROPIC_API_KEY"))
            if api_key is None:
                raise UnsupportedModelError(choice.model, "it needs VIGIL_AI_API_KEY (or ANTHROPIC_API_KEY)")
            anthropic = AsyncAnthropic(
                api_key=api_key, base_url=choice.base_url, timeout=request_timeout_seconds, max_retries=0
            )
            return AnthropicProvider(anthropic_client=anthropic)
        return infer_provider(name)

    if ":" not in choice.model:  # pydantic-ai's offline `test` model (and bare names) are not investigators
        raise UnsupportedModelError(choice.model, "Unknown model: a model string is `<provider>:<model>`")
    try:
        return infer_model(choice.model, provider_factory=provider_for)
    except UnsupportedModelError:
        raise
    except (UserError, ValueError, ImportError) as error:
        raise UnsupportedModelError(choice.model, str(error)) from error
