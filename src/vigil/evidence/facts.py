"""Organization facts as the analyst reads them: what the organization told Vigil about itself.

The engine records the organization's active facts as one evidence item (skill id ``vigil.organization_facts``,
output ``{"facts": [...]}`` in the shape of `OrgFact`) before every analysis, so the built-in analyst and a
language model read the same context and the case shows what was consulted. A fact only ever explains what it
covers: an address inside its range, a tool by its name within its scope, an event inside its window.
"""

from __future__ import annotations

import ipaddress
import re
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
        whose scope covers `scope` (the alert's hosts, accounts and addresses: `scope_covers`), unexpired at `at`."""
        wanted = {tool_name(name) for name in names} - {""}
        covered = list(scope)
        for fact in self.of(FactKind.APPROVED_TOOL):
            if not scope_covers(fact.scope, covered, fact.value):
                continue
            if at is not None and fact.expires_at < at:
                continue
            if tool_name(fact.value) in wanted:
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


#: Scope words that name something specific: a host or account pattern, an address range, a domain.
_SCOPE_SPLIT = re.compile(r"[\s,;()\[\]'\"]+")
_DATE_OR_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}|^\d{1,2}:\d{2}")


def scope_terms(scope: str | None, value: str = "") -> list[str]:
    """The specific things a fact's scope names (``rt-op-01``, ``HD-*``, ``adm-``, ``198.51.100.64/27``,
    ``acme.screenconnect.example``); plain words (``all managed laptops``) name nothing and cover everything. The
    fact's own value (a change window's reference) is not part of its scope."""
    terms = []
    for raw in _SCOPE_SPLIT.split(scope or ""):
        term = raw.strip(".:!?")
        if not term or term.casefold() == value.strip().casefold() or _DATE_OR_TIME.match(term):
            continue
        specific = any(mark in term for mark in "*@\\/") or term.endswith("-") or any(c.isdigit() for c in term)
        if specific or ("." in term and not term.endswith(".")):
            terms.append(term)
    return terms


def scope_covers(scope: str | None, observed: Iterable[str], value: str = "") -> bool:
    """Whether a fact's scope covers what the alert is about: a scope that names specific hosts, accounts or
    ranges covers only those (a pattern like ``VAL-S1-*`` or a prefix like ``adm-`` by match); one that names
    nothing specific covers everything its fact's value covers."""
    terms = scope_terms(scope, value)
    if not terms:
        return True
    seen = {item.strip().casefold() for item in observed if item and item.strip()}
    seen |= {item.split(".", 1)[0] for item in list(seen) if "." in item and "@" not in item}  # a host's short name
    seen |= {item.rsplit("\\", 1)[-1] for item in list(seen) if "\\" in item}  # DOMAIN\user
    return any(_term_matches(term.casefold(), seen) for term in terms)


def _term_matches(term: str, seen: set[str]) -> bool:
    if "/" in term:
        try:
            network = ipaddress.ip_network(term, strict=False)
        except ValueError:
            return term in seen
        return any(_in_network(item, network) for item in seen)
    if "*" in term or term.endswith("-"):
        pattern = re.compile(re.escape(term).replace(r"\*", ".*") + ("" if "*" in term else ".*"))
        return any(pattern.fullmatch(item) for item in seen)
    return term in seen


def _in_network(item: str, network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> bool:
    try:
        address = ipaddress.ip_address(item)
    except ValueError:
        return False
    return address.version == network.version and address in network


def tool_name(name: str) -> str:
    """``AnyDesk.exe``, ``anydesk`` and ``C:\\Program Files\\AnyDesk\\AnyDesk.exe`` name one tool."""
    return name.strip().replace("/", "\\").rsplit("\\", 1)[-1].casefold().removesuffix(".exe").strip()
