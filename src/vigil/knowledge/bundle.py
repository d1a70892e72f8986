"""One knowledge bundle on disk: where its files are, where it came from, and reading them once.

A bundle can be switched off (``VIGIL_KNOWLEDGE_DISABLED``, applied by the engine through ``set_disabled``): its
files then read as their own shape with every collection empty, so each loader builds its empty table with the
code that builds the full one. Loaders cache what they build with ``bundle_cache``, which a switch clears.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

DATA_DIR = Path(__file__).parent / "data"
PROVENANCE_FILE = "provenance.json"


class Provenance(BaseModel):
    """Where a bundle came from, as `vigil knowledge` and the console's Settings page show it.

    Licences ask for this: Sigma's DRL 1.1 (every match shows its rule's author), GPL-3.0 data kept a separate
    file with its licence beside it, MITRE's notice reproduced.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Folder name under data/, e.g. 'sigma'.")
    title: str = Field(description="What it is, for people: 'SigmaHQ detection rules (core)'.")
    source: str = Field(description="Upstream repository URL.")
    commit: str = Field(description="The pinned upstream commit the bundle was built from (40 hex digits).")
    date: str = Field(description="That commit's date, ISO 8601 (YYYY-MM-DD).")
    licence: str = Field(description="SPDX id or licence name, e.g. 'DRL-1.1', 'GPL-3.0-only', 'CC0-1.0'.")
    licence_file: str | None = Field(default=None, description="The licence text shipped beside the data.")
    counts: dict[str, int] = Field(description="What the bundle holds: {'rules': 2104, ...}.")
    files: list[str] = Field(description="Data files of the bundle, relative to its folder.")
    notes: str = ""

    def counts_text(self) -> str:
        """The counts as one line for tables: ``rules 2,104 · tactics 14``."""
        return " · ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in self.counts.items())


T = TypeVar("T")


class _Cached(Protocol):
    def cache_clear(self) -> None: ...


_CACHES: list[_Cached] = []
_disabled: frozenset[str] = frozenset()


def bundle_cache(build: Callable[[], T]) -> Callable[[], T]:
    """``functools.cache`` for a loader's table built from bundle files, cleared when ``set_disabled`` changes
    which bundles are off (a process runs with one setting; an evaluation's ablation switches them in turn)."""
    cached = cache(build)
    _CACHES.append(cached)
    return cached


def disabled_bundles() -> frozenset[str]:
    """The bundles switched off in this process (none unless ``set_disabled`` was called)."""
    return _disabled


def set_disabled(names: Iterable[str]) -> None:
    """Switch off exactly these bundles (by name, as `vigil knowledge` lists them) and drop every loader's table.

    Raises ``ValueError`` for a name no shipped bundle has, so a typo does not leave a bundle on unnoticed.
    """
    global _disabled  # noqa: PLW0603 - the process's one switch, as the loaders' caches are the process's
    wanted = frozenset(name.strip().lower() for name in names if name.strip())
    unknown = sorted(wanted - {bundle.name for bundle in bundles()})
    if unknown:
        known = ", ".join(bundle.name for bundle in bundles())
        raise ValueError(f"no knowledge bundle named {', '.join(unknown)} (there are: {known})")
    if wanted == _disabled:
        return
    _disabled = wanted
    for cached in _CACHES:
        cached.cache_clear()


def bundle_dir(name: str) -> Path:
    return DATA_DIR / name


@cache
def bundles() -> tuple[Provenance, ...]:
    """Every bundle shipped with this Vigil, by name."""
    found = [
        Provenance.model_validate_json(path.read_text(encoding="utf-8"))
        for path in sorted(DATA_DIR.glob(f"*/{PROVENANCE_FILE}"))
    ]
    return tuple(found)


def read_json(name: str, file: str) -> Any:
    """A bundle's JSON file (``.json`` or ``.json.gz``); callers cache what they build from it (``bundle_cache``).

    A switched-off bundle's file reads with each top-level list and object emptied (``{"rules": []}``).
    """
    path = bundle_dir(name) / file
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    payload = json.loads(raw)
    if name in _disabled and isinstance(payload, dict):
        return {key: type(value)() if isinstance(value, dict | list) else value for key, value in payload.items()}
    return payload


def write_bundle(out_root: Path, provenance: Provenance, payloads: dict[str, Any]) -> Path:
    """Write a bundle's data files and provenance (used by the builders in scripts/knowledge/).

    Files ending ``.json.gz`` are gzip-compressed with a fixed mtime so a rebuild at the same commit is
    byte-identical.
    """
    folder = out_root / provenance.name
    folder.mkdir(parents=True, exist_ok=True)
    for file, payload in payloads.items():
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        path = folder / file
        path.write_bytes(gzip.compress(text, mtime=0) if file.endswith(".gz") else text)
    (folder / PROVENANCE_FILE).write_text(provenance.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return folder
