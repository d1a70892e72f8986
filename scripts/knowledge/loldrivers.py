"""magicsword-io/LOLDrivers -> the `loldrivers` bundle: Windows drivers known to be malicious or vulnerable, by hash.

One YAML file per driver (``yaml/*.yaml``). Kept per driver: its name (the first tag, else a sample's original
file name), category (``malicious`` or ``vulnerable``), CVE ids (the ``CVE``/``CVEs`` fields and any named in the
use description) and the description's first sentence; and per known sample its SHA-256, SHA-1 and MD5 (lower case) ->
the driver. Authentihashes and PE metadata are left out.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from _licensed import write_licensed_bundle
from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance
from vigil.knowledge.loldrivers import BUNDLE, DATA_FILE, LICENCE_FILE

PIN = Pin(repo="magicsword-io/LOLDrivers", commit="5554706c8350a7b4a8631f05f490e563cd4b6e0a")
CVE = re.compile(r"\bCVE-\d{4}-\d{4,7}\b", re.IGNORECASE)
HASH_LENGTHS = {"SHA256": 64, "SHA1": 40, "MD5": 32}
HEX = re.compile(r"^[0-9a-f]+$")
DESCRIPTION_CHARS = 200


def _listed(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _one_line(text: str) -> str:
    """The description's first sentence, at most `DESCRIPTION_CHARS` characters."""
    line = " ".join(text.split())
    first = re.split(r"(?<=[a-z0-9)]\.)\s+(?=[A-Z])", line, maxsplit=1)[0]
    return first if len(first) <= DESCRIPTION_CHARS else first[: DESCRIPTION_CHARS - 1].rstrip() + "…"


def _driver(document: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    samples = [sample for sample in _listed(document.get("KnownVulnerableSamples")) if isinstance(sample, dict)]
    tags = [str(tag).strip() for tag in _listed(document.get("Tags")) if str(tag).strip()]
    names = [str(sample.get(key) or "").strip() for sample in samples for key in ("OriginalFilename", "Filename")]
    commands = document.get("Commands") if isinstance(document.get("Commands"), dict) else {}
    description = str(commands.get("Description") or "")
    cves = {
        str(cve).strip().upper()
        for key in ("CVE", "CVEs")
        for cve in _listed(document.get(key))
        if CVE.fullmatch(str(cve).strip())
    }
    cves.update(match.upper() for match in CVE.findall(description))
    category = "malicious" if str(document.get("Category") or "").strip().lower() == "malicious" else "vulnerable"
    hashes = [
        value
        for sample in samples
        for key, length in HASH_LENGTHS.items()
        if len(value := str(sample.get(key) or "").strip().lower()) == length and HEX.match(value)
    ]
    driver = {
        "id": str(document.get("Id") or ""),
        "name": next((name for name in (*tags, *names) if name), "unnamed driver"),
        "category": category,
        "cves": sorted(cves),
        "description": _one_line(description),
    }
    return driver, hashes


def build(tree: GitTree, out: Path) -> Provenance:
    drivers: list[dict[str, Any]] = []
    hashes: dict[str, int] = {}
    for path in tree.files("yaml"):
        if not path.endswith((".yaml", ".yml")):
            continue
        driver, found = _driver(yaml.safe_load(tree.text(path)))
        drivers.append(driver)
        for value in found:
            hashes.setdefault(value, len(drivers) - 1)  # a hash in two entries keeps the first (files sorted)
    categories = Counter(driver["category"] for driver in drivers)
    by_length = Counter(len(value) for value in hashes)
    return write_licensed_bundle(
        out,
        tree,
        PIN,
        name=BUNDLE,
        title="LOLDrivers: malicious and vulnerable Windows drivers by hash",
        licence="Apache-2.0",
        licence_file=LICENCE_FILE,
        counts={
            "drivers": len(drivers),
            "malicious": categories["malicious"],
            "vulnerable": categories["vulnerable"],
            "sha256": by_length[64],
            "sha1": by_length[40],
            "md5": by_length[32],
            "with_cve": sum(1 for driver in drivers if driver["cves"]),
        },
        notes="A malicious driver's hash is strong evidence, a vulnerable one's medium (docs/analyst.md, LD rules).",
        payloads={DATA_FILE: {"drivers": drivers, "hashes": dict(sorted(hashes.items()))}},
    )
