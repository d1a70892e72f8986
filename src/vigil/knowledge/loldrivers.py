"""Windows drivers known to be malicious or vulnerable (the `loldrivers` bundle, magicsword-io/LOLDrivers), by hash.

A malicious driver is an attacker's own kernel code; a vulnerable one is a legitimate, signed driver that attackers
bring to kill security tools or gain kernel access ("bring your own vulnerable driver"), which legitimate software
also still installs. SHA-256, SHA-1 and MD5 of every known sample are looked up alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from vigil.knowledge.bundle import bundle_cache, read_json

BUNDLE = "loldrivers"
DATA_FILE = "drivers.json.gz"
LICENCE_FILE = "LICENSE"
HASH = re.compile(r"^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64})$")


class DriverCategory(StrEnum):
    MALICIOUS = "malicious"
    VULNERABLE = "vulnerable"


@dataclass(frozen=True)
class Driver:
    id: str
    name: str
    category: DriverCategory
    cves: tuple[str, ...]
    description: str


@bundle_cache
def _tables() -> tuple[tuple[Driver, ...], dict[str, int]]:
    raw = read_json(BUNDLE, DATA_FILE)
    drivers = tuple(
        Driver(
            entry["id"], entry["name"], DriverCategory(entry["category"]), tuple(entry["cves"]), entry["description"]
        )
        for entry in raw["drivers"]
    )
    return drivers, raw["hashes"]


def by_hash(value: str) -> Driver | None:
    """The driver with a sample of this SHA-256, SHA-1 or MD5 (any case), or None."""
    wanted = value.strip().lower()
    if not HASH.match(wanted):
        return None
    drivers, hashes = _tables()
    index = hashes.get(wanted)
    return None if index is None else drivers[index]


def warm() -> int:
    return len(_tables()[1])
