"""wietze/HijackLibs -> the `hijacklibs` bundle: DLLs that legitimate executables load by name, where each belongs.

One YAML file per DLL (``yml/<vendor>/...``). Kept per DLL (by its lower-case name; a name two vendors use is one
entry): vendor, the folders it is expected in (``ExpectedLocations``, with HijackLibs' variables such as
``%SYSTEM32%``, ``%PROGRAMFILES%`` and ``%VERSION%`` left for the loader to expand) and the executables that load
it (path and hijack type: Sideloading, Phantom, Search Order, Environment Variable). The data is GPL-3.0: its own
file, licence beside it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from _licensed import write_licensed_bundle
from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance
from vigil.knowledge.hijacklibs import BUNDLE, DATA_FILE, LICENCE_FILE

PIN = Pin(repo="wietze/HijackLibs", commit="7d259c0bef28df19dda910ec07279e982c54ffbd")


def _dll(document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    executables = [
        [str(item["Path"]).strip(), str(item.get("Type") or "").strip()]
        for item in document.get("VulnerableExecutables") or []
        if isinstance(item, dict) and item.get("Path")
    ]
    return str(document["Name"]).strip().lower(), {
        "vendor": str(document.get("Vendor") or "").strip(),
        "expected": [str(folder).strip().rstrip("\\") for folder in document.get("ExpectedLocations") or []],
        "executables": executables,
    }


def build(tree: GitTree, out: Path) -> Provenance:
    dlls: dict[str, dict[str, Any]] = {}
    for path in tree.files("yml"):
        if not path.endswith((".yml", ".yaml")):
            continue
        name, entry = _dll(yaml.safe_load(tree.text(path)))
        if name in dlls:  # one file name, two vendors' DLLs: expected wherever either belongs
            known = dlls[name]
            known["vendor"] = " / ".join(dict.fromkeys([*known["vendor"].split(" / "), entry["vendor"]]))
            known["expected"] = list(dict.fromkeys([*known["expected"], *entry["expected"]]))
            known["executables"].extend(item for item in entry["executables"] if item not in known["executables"])
        else:
            dlls[name] = entry
    dlls = dict(sorted(dlls.items()))
    types = Counter(kind for dll in dlls.values() for _, kind in dll["executables"])
    return write_licensed_bundle(
        out,
        tree,
        PIN,
        name=BUNDLE,
        title="HijackLibs: DLL side-loading and hijacking candidates (expected folders, vulnerable executables)",
        licence="GPL-3.0-only",
        licence_file=LICENCE_FILE,
        counts={
            "dlls": len(dlls),
            "vulnerable_executables": sum(types.values()),
            **{f"type:{kind}": count for kind, count in sorted(types.items()) if kind},
        },
        notes="GPL-3.0 data, kept a separate file with the licence text beside it; Vigil's code only reads it.",
        payloads={DATA_FILE: {"dlls": dlls}},
    )
