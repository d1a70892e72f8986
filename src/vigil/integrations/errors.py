"""Typed integration errors: one exception type carrying a code, a user-facing cause/remedy and retryability.

Kept apart from ``framework`` so the HTTP layer can raise it without importing the skill registry.
"""

from __future__ import annotations

from dataclasses import dataclass


class IntegrationError(Exception):
    """A vendor call or skill input failed in a way the caller can act on.

    ``transient`` is True only for failures worth retrying later (timeouts, connection errors, 429, 5xx after the
    client's own retries); everything else (bad credentials, missing permission, bad input) is permanent.
    Messages never contain secret values.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        cause: str | None = None,
        remedy: str | None = None,
        transient: bool = False,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.cause = cause
        self.remedy = remedy
        self.transient = transient
        self.status_code = status_code

    def __repr__(self) -> str:
        return f"IntegrationError(code={self.code!r}, status_code={self.status_code!r}, message={self.message!r})"


class UnknownIntegrationError(KeyError):
    """No integration is declared with the requested id."""


class UnknownSkillError(KeyError):
    """No skill is registered with the requested id."""


@dataclass(frozen=True)
class Failure:
    """A known failure condition with its user-facing cause and remedy; vendor clients keep tables of these."""

    code: str
    cause: str
    remedy: str
    transient: bool = False

    def error(self, message: str, status_code: int | None = None) -> IntegrationError:
        return IntegrationError(
            self.code,
            message,
            cause=self.cause,
            remedy=self.remedy,
            transient=self.transient,
            status_code=status_code,
        )


RATE_LIMITED = Failure(
    "rate_limited", "Rate limit exceeded", "Wait a moment and retry; Vigil already backed off.", transient=True
)
SERVICE_ISSUE = Failure("service_issue", "Service issue", "Retry later.", transient=True)
UNEXPECTED_RESPONSE = Failure(
    "unexpected_response", "Unexpected response", "Check the configured base URL points at the vendor's API."
)


def generic_status_failure(status_code: int) -> Failure | None:
    """The shared mapping for statuses every vendor means the same way (rate limiting and server errors)."""
    if status_code == 429:
        return RATE_LIMITED
    if status_code >= 500:
        return SERVICE_ISSUE
    return None
