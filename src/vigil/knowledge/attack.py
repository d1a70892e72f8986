"""MITRE ATT&CK Enterprise as the analyst needs it: a technique's name and tactics (the `attack` bundle).

Risk that adds up counts distinct tactics per entity (initial access -> execution -> credential access outweighs
three hits of one rule), so every signal that knows its techniques also carries their tactics.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from vigil.knowledge.bundle import bundle_cache, read_json

BUNDLE = "attack"
DATA_FILE = "attack.json.gz"
LICENCE_FILE = "LICENSE.txt"
TECHNIQUE_ID = re.compile(r"^T\d{4}(?:\.\d{3})?$")


@dataclass(frozen=True)
class Technique:
    id: str
    name: str
    tactics: tuple[str, ...]  # shortnames in ATT&CK's order of appearance, e.g. ("credential-access",)
    parent: str | None


@bundle_cache
def _table() -> tuple[dict[str, Technique], dict[str, str]]:
    raw = read_json(BUNDLE, DATA_FILE)
    techniques = {
        technique_id: Technique(technique_id, entry["name"], tuple(entry["tactics"]), entry["parent"])
        for technique_id, entry in raw["techniques"].items()
    }
    return techniques, {shortname: entry["name"] for shortname, entry in raw["tactics"].items()}


def technique(technique_id: str) -> Technique | None:
    """A technique by id (``t1059.001`` and ``T1059.001`` alike); a sub-technique ATT&CK lacks falls back to its
    parent, so a vendor's newer id still finds its tactics."""
    wanted = technique_id.strip().upper()
    if not TECHNIQUE_ID.match(wanted):
        return None
    techniques = _table()[0]
    return techniques.get(wanted) or techniques.get(wanted.split(".")[0])


def tactics_of(technique_ids: Iterable[str]) -> tuple[str, ...]:
    """The distinct tactic shortnames of `technique_ids`, in first-seen order; unknown ids add nothing."""
    seen: dict[str, None] = {}
    for technique_id in technique_ids:
        found = technique(technique_id)
        for tactic in found.tactics if found else ():
            seen.setdefault(tactic)
    return tuple(seen)


def tactic_name(shortname: str) -> str:
    """``credential-access`` -> ``Credential Access`` (the shortname itself when ATT&CK has no such tactic)."""
    return _table()[1].get(shortname, shortname)


def warm() -> int:
    return len(_table()[0])
