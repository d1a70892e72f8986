"""LOLBAS-Project/LOLBAS -> the `lolbas` bundle: Windows binaries, scripts and libraries with catalogued abuse.

One YAML file per binary (``yml/OSBinaries``, ``OtherMSBinaries``, ``OSLibraries``, ``OSScripts``,
``HonorableMentions``). Kept per binary: its name, kind (the folder), full paths and each abuse command with its
category (Download, Execute, AWL Bypass, ...), use case and ATT&CK id. The data is GPL-3.0: it stays its own file
with the licence text beside it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from _licensed import write_licensed_bundle
from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance
from vigil.knowledge.lolbas import BUNDLE, DATA_FILE, LICENCE_FILE

PIN = Pin(repo="LOLBAS-Project/LOLBAS", commit="3403b338875b8a99a0cd7ba4ced5086e8d310bf7")


def _binary(path: str, document: dict[str, Any]) -> dict[str, Any]:
    commands = [
        {
            "command": str(command["Command"]).strip(),
            "category": str(command.get("Category") or "").strip(),
            "usecase": str(command.get("Usecase") or "").strip(),
            "mitre": str(command.get("MitreID") or "").strip(),
        }
        for command in document.get("Commands") or []
        if isinstance(command, dict) and command.get("Command")
    ]
    paths = [
        str(item["Path"]).strip()
        for item in document.get("Full_Path") or []
        if isinstance(item, dict) and item.get("Path")
    ]
    return {"name": str(document["Name"]).strip(), "kind": path.split("/")[1], "paths": paths, "commands": commands}


def build(tree: GitTree, out: Path) -> Provenance:
    binaries = sorted(
        (_binary(path, yaml.safe_load(tree.text(path))) for path in tree.files("yml") if path.endswith(".yml")),
        key=lambda binary: binary["name"].lower(),
    )
    categories = Counter(command["category"] for binary in binaries for command in binary["commands"])
    return write_licensed_bundle(
        out,
        tree,
        PIN,
        name=BUNDLE,
        title="LOLBAS: Windows binaries and scripts with catalogued abuse (commands, categories, ATT&CK)",
        licence="GPL-3.0-only",
        licence_file=LICENCE_FILE,
        counts={
            "binaries": len(binaries),
            "commands": sum(categories.values()),
            **{f"category:{name}": count for name, count in sorted(categories.items()) if name},
        },
        notes="GPL-3.0 data, kept a separate file with the licence text beside it; Vigil's code only reads it.",
        payloads={DATA_FILE: {"binaries": binaries}},
    )
