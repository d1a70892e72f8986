"""Writing a bundle that ships its upstream licence beside its data (the licence file, then the provenance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance, write_bundle


def write_licensed_bundle(
    out: Path,
    tree: GitTree,
    pin: Pin,
    *,
    name: str,
    title: str,
    licence: str,
    licence_file: str,
    counts: dict[str, int],
    payloads: dict[str, Any],
    notes: str,
) -> Provenance:
    """Copy upstream's ``LICENSE`` into the bundle as `licence_file`, then write `payloads` and the provenance."""
    (out / name).mkdir(parents=True, exist_ok=True)
    (out / name / licence_file).write_text(tree.text("LICENSE"), encoding="utf-8")
    provenance = Provenance(
        name=name,
        title=title,
        source=pin.url,
        commit=tree.commit,
        date=tree.date(),
        licence=licence,
        licence_file=licence_file,
        counts=counts,
        files=[*payloads, licence_file],
        notes=notes,
    )
    write_bundle(out, provenance, payloads)
    return provenance
