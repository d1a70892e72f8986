"""Typed errors of the AI layer, each with a stable code the API and CLI map to messages."""

from __future__ import annotations


class AIError(Exception):
    """Base of AI-layer errors; `code` is stable, the message is for people."""

    code = "ai_error"


class UnsupportedModelError(AIError):
    """`VIGIL_AI_MODEL` names a model this build cannot run."""

    code = "unsupported_ai_model"

    def __init__(self, model: str) -> None:
        super().__init__(
            f"VIGIL_AI_MODEL={model!r} is not supported yet: only 'builtin' is available in this version; "
            "LLM models (openai:…, anthropic:…, OpenAI-compatible endpoints) arrive in a later release."
        )
        self.model = model
