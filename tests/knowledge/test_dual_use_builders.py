"""The dual-use builders over small upstream repositories made here: what each keeps, and a rebuild at the same
commit is byte-identical."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from tests.knowledge.test_builders import SCRIPTS, _repo

LICENCE = "Licence text\n"


@pytest.fixture
def scripts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(SCRIPTS))


def _module(name: str) -> ModuleType:
    __import__(name)
    return sys.modules[name]


def _build(name: str, root: Path, files: dict[str, Any]) -> tuple[dict[str, Any], Any, Path]:
    from gittree import GitTree

    texts = {path: value if isinstance(value, str) else yaml.safe_dump(value) for path, value in files.items()}
    git_dir, commit = _repo(root, {"LICENSE": LICENCE, **texts})
    out = root / "out"
    builder = _module(name)
    provenance = builder.build(GitTree(git_dir, commit), out)
    data_file = out / provenance.name / provenance.files[0]
    raw = data_file.read_bytes()
    builder.build(GitTree(git_dir, commit), out)
    assert data_file.read_bytes() == raw  # reproducible
    assert (out / provenance.name / "LICENSE").read_text(encoding="utf-8") == LICENCE
    assert provenance.commit == commit
    return json.loads(gzip.decompress(raw)), provenance, out


@pytest.mark.usefixtures("scripts")
def test_lolrmm_keeps_executables_and_domains_and_drops_placeholders(tmp_path: Path) -> None:
    tool = {
        "Name": "AnyDesk",
        "Category": "RMM",
        "Details": {
            "PEMetadata": [{"Filename": "anydesk.exe", "OriginalFileName": "AnyDesk.exe"}],
            "InstallationPaths": ["C:\\Program Files\\AnyDesk\\*", "AnyDesk*.exe", "setup.exe"],
        },
        "Artifacts": {
            "Network": [
                {"Domains": ["relay-[a-f0-9]{8}.net.anydesk.com:443", "*.anydesk.com", "<operator-configured host>"]},
                {"Domains": ["raw.githubusercontent.com", "*.amazonaws.com", "198.51.100.7"]},
            ]
        },
    }
    data, provenance, _ = _build("lolrmm", tmp_path, {"yaml/anydesk.yaml": tool})
    assert data["tools"] == [
        {
            "name": "AnyDesk",
            "category": "RMM",
            "executables": ["anydesk*.exe", "anydesk.exe"],
            "domains": ["*.anydesk.com", "relay-*.net.anydesk.com"],
        }
    ]
    assert provenance.counts == {"tools": 1, "rat_tools": 0, "executables": 2, "domains": 2}


@pytest.mark.usefixtures("scripts")
def test_lolbas_keeps_commands_with_category_and_attack_id(tmp_path: Path) -> None:
    binary = {
        "Name": "Certutil.exe",
        "Commands": [
            {"Command": "certutil.exe -urlcache -f {REMOTEURL} {PATH}", "Category": "Download", "MitreID": "T1105",
             "Usecase": "Download file", "Description": "long text"},
        ],
        "Full_Path": [{"Path": "C:\\Windows\\System32\\certutil.exe"}],
    }  # fmt: skip
    data, provenance, _ = _build("lolbas", tmp_path, {"yml/OSBinaries/Certutil.yml": binary})
    assert data["binaries"][0]["kind"] == "OSBinaries"
    assert data["binaries"][0]["commands"] == [
        {"command": "certutil.exe -urlcache -f {REMOTEURL} {PATH}", "category": "Download", "usecase": "Download file",
         "mitre": "T1105"}
    ]  # fmt: skip
    assert provenance.licence == "GPL-3.0-only" and provenance.counts["category:Download"] == 1


@pytest.mark.usefixtures("scripts")
def test_hijacklibs_merges_one_dll_name_of_two_vendors(tmp_path: Path) -> None:
    def dll(vendor: str, folder: str, exe: str) -> dict[str, Any]:
        return {"Name": "Sqlite.dll", "Vendor": vendor, "ExpectedLocations": [folder],
                "VulnerableExecutables": [{"Path": exe, "Type": "Sideloading"}]}  # fmt: skip

    files = {
        "yml/3rd_party/adobe/sqlite.yml": dll("Adobe", "%PROGRAMFILES%\\Adobe\\", "%PROGRAMFILES%\\Adobe\\a.exe"),
        "yml/3rd_party/other/sqlite.yml": dll("Other", "%LOCALAPPDATA%\\Other", "%LOCALAPPDATA%\\Other\\o.exe"),
    }
    data, provenance, _ = _build("hijacklibs", tmp_path, files)
    assert data["dlls"] == {
        "sqlite.dll": {
            "vendor": "Adobe / Other",
            "expected": ["%PROGRAMFILES%\\Adobe", "%LOCALAPPDATA%\\Other"],
            "executables": [
                ["%PROGRAMFILES%\\Adobe\\a.exe", "Sideloading"],
                ["%LOCALAPPDATA%\\Other\\o.exe", "Sideloading"],
            ],
        }
    }
    assert provenance.counts == {"dlls": 1, "vulnerable_executables": 2, "type:Sideloading": 2}


@pytest.mark.usefixtures("scripts")
def test_loldrivers_keeps_every_hash_of_every_sample_and_the_cves(tmp_path: Path) -> None:
    driver = {
        "Id": "d-1",
        "Tags": ["speedfan.sys"],
        "Category": "vulnerable driver",
        "CVE": ["CVE-2007-5633", ""],
        "Commands": {"Description": "A vulnerable driver, see CVE-2020-0001."},
        "KnownVulnerableSamples": [
            {"SHA256": "A" * 64, "SHA1": "b" * 40, "MD5": "c" * 32},
            {"SHA256": "", "MD5": "not-a-hash"},
        ],
    }
    data, provenance, _ = _build("loldrivers", tmp_path, {"yaml/d-1.yaml": driver})
    assert data["drivers"] == [
        {"id": "d-1", "name": "speedfan.sys", "category": "vulnerable", "cves": ["CVE-2007-5633", "CVE-2020-0001"],
         "description": "A vulnerable driver, see CVE-2020-0001."}
    ]  # fmt: skip
    assert data["hashes"] == {"a" * 64: 0, "b" * 40: 0, "c" * 32: 0}
    assert provenance.counts["vulnerable"] == 1 and provenance.counts["with_cve"] == 1


def test_the_builder_driver_finds_the_dual_use_builders() -> None:
    sys.path.insert(0, str(SCRIPTS))
    try:
        import build
    finally:
        sys.path.remove(str(SCRIPTS))
    assert {"lolrmm", "lolbas", "hijacklibs", "loldrivers"} <= set(build.builders())
