"""The builders over a small upstream repository made here: what they keep, how ranges merge, reproducibility."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts" / "knowledge"


def _warning_list(name: str, kind: str, values: list[str]) -> str:
    return json.dumps({"name": name, "description": name, "type": kind, "version": 7, "list": values})


def _repo(root: Path, files: dict[str, str]) -> tuple[Path, str]:
    work = root / "upstream"
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text, encoding="utf-8")
    git = ["git", "-C", str(work), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "lists"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    return work / ".git", commit


@pytest.fixture
def builder(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import misp_warninglists

    return misp_warninglists


def test_misp_builder_keeps_the_chosen_kinds_and_merges_adjacent_ranges(builder: ModuleType, tmp_path: Path) -> None:
    from gittree import GitTree

    git_dir, commit = _repo(
        tmp_path,
        {
            "lists/amazon-aws/list.json": _warning_list(
                "AWS", "cidr", ["192.0.2.0/25", "192.0.2.128/25", "2001:db8::/33"]
            ),
            "lists/censys-scanning/list.json": _warning_list("Censys scanners", "cidr", ["198.51.100.7"]),
            "lists/dynamic-dns/list.json": _warning_list(
                "Dynamic DNS", "hostname", [".dyn.example", "www.other.example"]
            ),
            "lists/tranco/list.json": _warning_list("Top sites", "hostname", ["example.com"]),
        },
    )
    out = tmp_path / "out"
    provenance = builder.build(GitTree(git_dir, commit), out)

    raw = (out / "network" / "lists.json.gz").read_bytes()
    lists = json.loads(gzip.decompress(raw))["lists"]
    assert set(lists) == {"amazon-aws", "censys-scanning", "dynamic-dns"}  # a popularity list says nothing
    assert lists["amazon-aws"]["v4"] == [3221225984, 3221226239]  # two /25 halves -> one range
    assert lists["amazon-aws"]["kind"] == "cloud" and lists["amazon-aws"]["owner"] == "Amazon Web Services"
    assert lists["censys-scanning"]["kind"] == "scanner"
    assert lists["dynamic-dns"]["domains"] == ["dyn.example", "other.example"]
    assert provenance.commit == commit
    assert provenance.counts == {"lists": 3, "ipv4_ranges": 2, "ipv6_ranges": 1, "domains": 2}
    builder.build(GitTree(git_dir, commit), out)
    assert (out / "network" / "lists.json.gz").read_bytes() == raw  # a rebuild at the same commit is identical


def test_the_builder_driver_finds_every_builder() -> None:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import build
    finally:
        sys.path.remove(str(SCRIPTS))
    assert {"misp_warninglists", "mitre_attack", "microsoft_info"} <= set(build.builders())
