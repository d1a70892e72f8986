"""Organization facts as the analyst reads them: what the organization told Vigil about itself.

The engine records the organization's active facts as one evidence item (skill id ``vigil.organization_facts``,
output ``{"facts": [...]}`` in the shape of `OrgFact`) before every analysis, so the built-in analyst and a
language model read the same context and the case shows what was consulted. A fact only ever explains what it
covers: an address inside its range, a tool by its name within its scope, an event inside its window.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

ORG_FACTS_SKILL_ID = "vigil.organization_facts"


class FactKind(StrEnum):
    AUTHORISED_SCANNER = "authorised_scanner"
    VPN_EGRESS = "vpn_egress"
    OFFICE_NETWORK = "office_network"
    CI_NETWORK = "ci_network"
    APPROVED_TOOL = "approved_tool"
    CHANGE_WINDOW = "change_window"
    VIP_ACCOUNT = "vip_account"
    SERVICE_ACCOUNT = "service_account"


#: Kinds whose value is an IP address or CIDR range.
NETWORK_KINDS = frozenset(
    {FactKind.AUTHORISED_SCANNER, FactKind.VPN_EGRESS, FactKind.OFFICE_NETWORK, FactKind.CI_NETWORK}
)


@dataclass(frozen=True)
class OrgFact:
    """One fact with who vouches for it and until when (epoch seconds, UTC)."""

    id: str
    kind: FactKind
    value: str
    scope: str | None
    reason: str
    owner: str
    created_by: str
    expires_at: int
    window_start: int | None = None
    window_end: int | None = None

    def as_output(self) -> dict[str, Any]:
        """The fact as the evidence item stores it."""
        return {
            "id": self.id,
            "kind": self.kind.value,
            "value": self.value,
            "scope": self.scope,
            "reason": self.reason,
            "owner": self.owner,
            "created_by": self.created_by,
            "expires_at": self.expires_at,
            "window_start": self.window_start,
            "window_end": self.window_end,
        }

    @classmethod
    def from_output(cls, raw: Mapping[str, Any]) -> OrgFact | None:
        """A fact from the evidence item, or None for anything malformed (evidence is never trusted blindly)."""
        try:
            return cls(
                id=str(raw["id"]),
                kind=FactKind(raw["kind"]),
                value=str(raw["value"]),
                scope=None if raw.get("scope") is None else str(raw["scope"]),
                reason=str(raw.get("reason", "")),
                owner=str(raw.get("owner", "")),
                created_by=str(raw.get("created_by", "")),
                expires_at=int(raw["expires_at"]),
                window_start=None if raw.get("window_start") is None else int(raw["window_start"]),
                window_end=None if raw.get("window_end") is None else int(raw["window_end"]),
            )
        except (KeyError, TypeError, ValueError):
            return None

    def network(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
        if self.kind not in NETWORK_KINDS:
            return None
        try:
            return ipaddress.ip_network(self.value.strip(), strict=False)
        except ValueError:
            return None

    def citation(self) -> str:
        """How a finding names the fact: who recorded it and until when it holds."""
        expires = datetime.fromtimestamp(self.expires_at, UTC).strftime("%Y-%m-%d")
        return f"fact by {self.owner or self.created_by}, expires {expires}"


@dataclass(frozen=True)
class OrgFacts:
    """The facts an investigation consulted, with lookups by what they cover."""

    facts: tuple[OrgFact, ...] = ()

    @classmethod
    def from_output(cls, output: Mapping[str, Any] | None) -> OrgFacts:
        raw = output.get("facts") if output else None
        items = raw if isinstance(raw, list) else []
        return cls(tuple(fact for item in items if isinstance(item, Mapping) and (fact := OrgFact.from_output(item))))

    def of(self, *kinds: FactKind) -> tuple[OrgFact, ...]:
        return tuple(fact for fact in self.facts if fact.kind in kinds)

    def covering_ip(self, address: str, kinds: Iterable[FactKind] = NETWORK_KINDS) -> OrgFact | None:
        """The first network fact of `kinds` whose range holds `address`."""
        try:
            ip = ipaddress.ip_address(address.strip())
        except ValueError:
            return None
        wanted = set(kinds)
        for fact in self.facts:
            network = fact.network()
            if fact.kind in wanted and network is not None and ip.version == network.version and ip in network:
                return fact
        return None

    def account(self, name: str, kind: FactKind) -> OrgFact | None:
        """A VIP or service-account fact naming `name` (an e-mail or user name, compared case-insensitively)."""
        wanted = name.strip().casefold()
        return next((f for f in self.of(kind) if f.value.strip().casefold() == wanted), None)

    def approved_tool(self, names: Iterable[str], scope: Iterable[str] = (), at: int | None = None) -> OrgFact | None:
        """An `approved_tool` fact naming one of `names` (a tool's name or file name; ``.exe`` and case aside)
        whose scope, when it has one, is among `scope` (the alert's hosts and accounts), unexpired at `at`."""
        wanted = {_tool_name(name) for name in names} - {""}
        covered = {value.strip().casefold() for value in scope}
        for fact in self.of(FactKind.APPROVED_TOOL):
            if fact.scope and fact.scope.strip().casefold() not in covered:
                continue
            if at is not None and fact.expires_at < at:
                continue
            if _tool_name(fact.value) in wanted:
                return fact
        return None

    def window_at(self, epoch: int) -> tuple[OrgFact, ...]:
        """Change windows open at `epoch` (the alert's own event time)."""
        return tuple(
            fact
            for fact in self.of(FactKind.CHANGE_WINDOW)
            if fact.window_start is not None
            and fact.window_end is not None
            and fact.window_start <= epoch <= fact.window_end
        )


def _tool_name(name: str) -> str:
    """``AnyDesk.exe``, ``anydesk`` and ``C:\\Program Files\\AnyDesk\\AnyDesk.exe`` name one tool."""
    return name.strip().replace("/", "\\").rsplit("\\", 1)[-1].casefold().removesuffix(".exe").strip()
