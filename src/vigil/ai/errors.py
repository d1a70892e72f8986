"""Typed errors of the AI layer, each with a stable code the API and CLI map to messages."""

from __future__ import annotations


class AIError(Exception):
    """Base of AI-layer errors; `code` is stable, the message is for people."""

    code = "ai_error"


class UnsupportedModelError(AIError):
    """`VIGIL_AI_MODEL` (or an organization's override) names a model this build cannot run."""

    code = "unsupported_ai_model"

    def __init__(self, model: str, reason: str) -> None:
        super().__init__(
            f"AI model {model!r} cannot be used: {reason}. Use 'builtin', 'openai:<model>', "
            "'openai-chat:<model>' (any OpenAI-compatible server with VIGIL_AI_BASE_URL) or 'anthropic:<model>'."
        )
        self.model = model
