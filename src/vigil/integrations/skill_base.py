"""What a skill, a connection test and a chat provider's call are written against: the connection's context and
the bases of a skill's input and output.

Kept apart from ``framework.py`` (which re-exports all of it) because ``framework.Integration`` names the chat
capability (``chat.ChatProvider``), whose calls and checkpoint models need these: both import this module, and
neither imports the other back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vigil.integrations.errors import IntegrationError
from vigil.integrations.http import OutboundClient
from vigil.integrations.redaction import Redactor


@dataclass(frozen=True)
class VendorUrl:
    """A base URL an integration calls, declared in the vendor's folder: `<integration id>.<name>` and its public
    default, so a vendor's hosts are written in one place."""

    key: str
    default: str


@dataclass(frozen=True)
class Endpoints:
    """The operator's overrides of vendor base URLs (`VIGIL_VENDOR_URLS`, keyed by `VendorUrl.key`): a regional
    or proxied API, or a loopback fake in tests. Everything not overridden is the vendor's declared default."""

    overrides: Mapping[str, str] = field(default_factory=dict)

    def url(self, vendor_url: VendorUrl) -> str:
        return self.overrides.get(vendor_url.key, vendor_url.default).rstrip("/")


@dataclass
class SkillContext:
    """What a skill or connection test may use: decrypted field values, a stable connection key and the HTTP layer."""

    values: Mapping[str, str] = field(repr=False)  # decrypted secrets: never in a repr or traceback
    connection_key: str
    endpoints: Endpoints
    http: OutboundClient
    redactor: Redactor = field(default_factory=Redactor, repr=False)
    """Knows the connection's secrets and the credentials sent; the runner cleans vendor text with it."""

    def value(self, name: str, default: str | None = None) -> str | None:
        """A field value with surrounding whitespace removed; empty counts as missing."""
        raw = self.values.get(name)
        text = raw.strip() if isinstance(raw, str) else ""
        return text or default

    def require(self, name: str, label: str) -> str:
        """A field value the call cannot go without; missing is a permanent configuration error."""
        text = self.value(name)
        if text is None:
            raise IntegrationError(
                "missing_connection_field",
                f"The connection has no {label}.",
                cause=f"{label} missing",
                remedy=f"Edit the connection and enter the {label}.",
            )
        return text


class SkillInput(BaseModel):
    """Base for skill inputs: unknown keys are rejected so a typo in a playbook fails loudly."""

    model_config = ConfigDict(extra="forbid")


class SkillOutput(BaseModel):
    """Base for skill outputs (serialised with field names, which are what playbooks reference)."""


def optional(description: str, default: Any = None) -> Any:
    """A described field with a default, the common case for vendor record attributes and filters."""
    return Field(default=default, description=description)
