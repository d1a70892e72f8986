"""Who an address or a domain belongs to, from the MISP warning lists (the `network` bundle).

A hit says what the address *is* — a cloud provider's range, a SaaS vendor's own service, a research scanner,
a VPN/datacentre exit, a public resolver, phishing-simulation infrastructure — never that it is malicious.
Ranges are sorted integer pairs per list, so a lookup is one bisect per list, not a scan.
"""

from __future__ import annotations

import ipaddress
from array import array
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from vigil.knowledge.bundle import bundle_cache, read_json

BUNDLE = "network"
DATA_FILE = "lists.json.gz"
IPV4 = 4


class ListKind(StrEnum):
    """What being on a list says about an address or domain."""

    CLOUD = "cloud"  # a cloud provider's published ranges: hosting, neither good nor bad by itself
    SERVICE = "service"  # a SaaS vendor's own service (webhooks, CI runners, mail): the vendor talking
    SCANNER = "scanner"  # internet-wide research and attack-surface scanners
    ANONYMISER = "anonymiser"  # VPN providers and datacentres (not an eyeball network)
    RESOLVER = "resolver"  # public DNS resolvers
    SIMULATION = "simulation"  # phishing / attack-simulation infrastructure
    SHORTENER = "shortener"  # URL shorteners (domains)
    DYNAMIC_DNS = "dynamic_dns"  # free dynamic DNS zones (domains)


@dataclass(frozen=True)
class ListHit:
    """One list that holds the value, named as a finding cites it."""

    list_id: str
    name: str
    kind: ListKind
    owner: str
    service: str | None

    @property
    def label(self) -> str:
        return f"{self.owner} ({self.service})" if self.service else self.owner


@dataclass(frozen=True)
class _Ranges:
    """Sorted, non-overlapping, inclusive ranges of one address family."""

    starts: Sequence[int]
    ends: Sequence[int]

    @classmethod
    def of(cls, flat: Sequence[int], typecode: str | None) -> _Ranges:
        """From the bundle's [start, end, start, end, ...]; IPv4 packed in a C array (4 bytes a value)."""
        starts, ends = list(flat[0::2]), list(flat[1::2])
        if typecode is None:
            return cls(starts, ends)
        return cls(array(typecode, starts), array(typecode, ends))

    def __contains__(self, value: int) -> bool:
        index = bisect_right(self.starts, value) - 1
        return index >= 0 and value <= self.ends[index]


@dataclass(frozen=True)
class _List:
    hit: ListHit
    v4: _Ranges
    v6: _Ranges
    domains: frozenset[str]


@bundle_cache
def _lists() -> tuple[_List, ...]:
    raw = read_json(BUNDLE, DATA_FILE)["lists"]
    return tuple(
        _List(
            hit=ListHit(list_id, entry["name"], ListKind(entry["kind"]), entry["owner"], entry["service"]),
            v4=_Ranges.of(entry["v4"], "I"),
            v6=_Ranges.of([int(value) for value in entry["v6"]], None),
            domains=frozenset(entry["domains"]),
        )
        for list_id, entry in sorted(raw.items())
    )


def ip_lists(address: str) -> tuple[ListHit, ...]:
    """Every list whose ranges hold `address` (empty for anything that is not an address)."""
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return ()
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    value = int(ip)
    return tuple(item.hit for item in _lists() if value in (item.v4 if ip.version == IPV4 else item.v6))


def domain_lists(domain: str) -> tuple[ListHit, ...]:
    """Every list naming `domain` or a zone above it (``a.b.duckdns.org`` is in a list of ``duckdns.org``)."""
    name = domain.strip().strip(".").lower().removeprefix("www.")
    labels = name.split(".")
    candidates = {".".join(labels[i:]) for i in range(len(labels) - 1)} if len(labels) > 1 else set()
    return tuple(item.hit for item in _lists() if candidates & item.domains)


def warm() -> int:
    """Load the bundle now (benchmarks, start-up); returns how many lists it holds."""
    return len(_lists())
