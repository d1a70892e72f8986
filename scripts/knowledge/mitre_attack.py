"""MITRE ATT&CK Enterprise (mitre/cti) -> the `attack` bundle: technique id -> name, tactics, parent.

Read from the per-object files (``enterprise-attack/attack-pattern/*.json``, ``x-mitre-tactic/*.json``); revoked
and deprecated techniques are left out. MITRE's licence asks for its copyright designation and licence in every
copy: the ATT&CK part of ``LICENSE.txt`` ships beside the data.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gittree import GitTree, Pin

from vigil.knowledge.attack import BUNDLE, DATA_FILE, LICENCE_FILE
from vigil.knowledge.bundle import Provenance, write_bundle

PIN = Pin(repo="mitre/cti", commit="421deacb77191b38bdd1bf63268954e93da91365")
KILL_CHAIN = "mitre-attack"


def _objects(tree: GitTree, folder: str) -> list[dict[str, Any]]:
    return [obj for path in tree.files(folder) for obj in json.loads(tree.text(path))["objects"]]


def _attack_id(obj: dict[str, Any]) -> str | None:
    return next(
        (ref["external_id"] for ref in obj.get("external_references", []) if ref.get("source_name") == KILL_CHAIN),
        None,
    )


def _live(obj: dict[str, Any]) -> bool:
    return not obj.get("revoked", False) and not obj.get("x_mitre_deprecated", False)


def build(tree: GitTree, out: Path) -> Provenance:
    tactics = {
        obj["x_mitre_shortname"]: {"id": _attack_id(obj), "name": obj["name"]}
        for obj in _objects(tree, "enterprise-attack/x-mitre-tactic")
        if _live(obj)
    }
    techniques: dict[str, dict[str, Any]] = {}
    for obj in _objects(tree, "enterprise-attack/attack-pattern"):
        technique_id = _attack_id(obj)
        if technique_id is None or not _live(obj):
            continue
        phases = [p["phase_name"] for p in obj.get("kill_chain_phases", []) if p["kill_chain_name"] == KILL_CHAIN]
        techniques[technique_id] = {
            "name": obj["name"],
            "tactics": [phase for phase in phases if phase in tactics],
            "parent": technique_id.split(".")[0] if "." in technique_id else None,
        }
    licence = tree.text("LICENSE.txt").split("CAPEC")[0].rstrip() + "\n"
    (out / BUNDLE).mkdir(parents=True, exist_ok=True)
    (out / BUNDLE / LICENCE_FILE).write_text(licence, encoding="utf-8")
    provenance = Provenance(
        name=BUNDLE,
        title="MITRE ATT&CK Enterprise: techniques and their tactics",
        source=PIN.url,
        commit=tree.commit,
        date=tree.date(),
        licence="MITRE ATT&CK Terms of Use",
        licence_file=LICENCE_FILE,
        counts={
            "techniques": sum(1 for t in techniques.values() if t["parent"] is None),
            "sub_techniques": sum(1 for t in techniques.values() if t["parent"] is not None),
            "tactics": len(tactics),
        },
        files=[DATA_FILE, LICENCE_FILE],
        notes=next(line.strip('"') for line in licence.splitlines() if line.startswith('"©')),
    )
    write_bundle(out, provenance, {DATA_FILE: {"tactics": tactics, "techniques": techniques}})
    return provenance
