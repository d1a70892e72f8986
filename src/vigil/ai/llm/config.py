"""Which model an organization's investigations use, and the limits every conversation runs within."""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import SecretStr

from vigil.settings import Settings

OPENAI_PROVIDERS = frozenset({"openai", "openai-chat", "openai-responses"})


@dataclass(frozen=True)
class ModelChoice:
    """A model string and where to reach it; the key stays a `SecretStr` so no repr or log shows it."""

    model: str
    base_url: str | None = None
    api_key: SecretStr | None = field(default=None, repr=False, compare=False)
    #: Distinguishes two choices with different keys without holding the key in the comparison.
    key_fingerprint: str = ""


@dataclass(frozen=True)
class Limits:
    """Per-request client limits and per-conversation budgets (settings with defaults)."""

    request_timeout_seconds: float = 60.0
    max_retries: int = 3
    retry_backoff_seconds: float = 2.0
    max_retry_after_seconds: float = 60.0
    max_tool_calls: int = 8
    max_tokens: int = 200_000
    max_seconds: float = 300.0

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(
            request_timeout_seconds=settings.ai_request_timeout_seconds,
            max_retries=settings.ai_max_retries,
            retry_backoff_seconds=settings.ai_retry_backoff_seconds,
            max_tool_calls=settings.ai_max_tool_calls,
            max_tokens=settings.ai_max_tokens,
            max_seconds=settings.ai_max_seconds,
        )
