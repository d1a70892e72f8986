"""DLLs legitimate executables load by name, and the folders each belongs in (the `hijacklibs` bundle,
wietze/HijackLibs; GPL-3.0 data, read, not copied).

A catalogued DLL loaded from a folder none of its expected locations names is a side-loading candidate: a
legitimate (often signed) executable copied next to an attacker's DLL of the same name. HijackLibs writes folders
with variables (``%SYSTEM32%``, ``%PROGRAMFILES%``, ``%LOCALAPPDATA%``, ``%VERSION%`` for a version segment);
they are expanded here and paths compared case-insensitively, whichever drive and user they name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from vigil.knowledge.bundle import bundle_cache, read_json

BUNDLE = "hijacklibs"
DATA_FILE = "hijacklibs.json.gz"
LICENCE_FILE = "LICENSE"

_DRIVE = r"[a-z]:"
_USER = _DRIVE + r"\\users\\[^\\]+"
#: HijackLibs' folder variables as regular expressions over a lower-case Windows path.
VARIABLES = {
    "%system32%": _DRIVE + r"\\windows\\system32",
    "%syswow64%": _DRIVE + r"\\windows\\syswow64",
    "%windir%": _DRIVE + r"\\windows",
    "%systemroot%": _DRIVE + r"\\windows",
    "%programfiles%": _DRIVE + r"\\program files(?: \(x86\))?",
    "%programdata%": _DRIVE + r"\\programdata",
    "%appdata%": _USER + r"\\appdata\\roaming",
    "%localappdata%": _USER + r"\\appdata\\local",
    "%userprofile%": _USER,
    "%version%": r"[^\\]+",
}
VARIABLE = re.compile(r"%[a-z0-9_]+%")
#: Kernel device paths (``\Device\HarddiskVolume3\Windows``) and long-path prefixes (``\\?\C:\``) some EDRs report.
DEVICE_PREFIX = re.compile(r"^(?:\\\\\?\\|\\\?\?\\)|^\\device\\harddiskvolume\d+(?=\\)")


@dataclass(frozen=True)
class HijackDll:
    name: str
    vendor: str
    expected: tuple[str, ...]  # as HijackLibs writes them: "%SYSTEM32%", "%PROGRAMFILES%\\Adobe\\..."
    executables: tuple[tuple[str, str], ...]  # (path, hijack type)

    def expected_in(self, folder: str) -> bool:
        """Whether `folder` is one of the DLL's expected locations (a DLL with none is expected nowhere)."""
        folders = _folders(self.expected)
        return folders is not None and folders.fullmatch(normalized(folder)) is not None

    def loaded_by(self, image: str) -> tuple[str, str] | None:
        """The catalogued executable (path, type) of the same file name as `image`, if any."""
        name = normalized(image).rsplit("\\", 1)[-1]
        return next((item for item in self.executables if item[0].lower().rsplit("\\", 1)[-1] == name), None)


def normalized(path: str) -> str:
    """A Windows path as compared: lower case, backslashes, no device prefix (that volume read as ``c:``), no
    trailing separator."""
    text = path.strip().strip("'\"").replace("/", "\\").lower()
    text = DEVICE_PREFIX.sub(
        lambda match: "" if match.group(0).startswith("\\\\") or "?" in match.group(0) else "c:", text
    )
    return text.rstrip("\\")


def _pattern(folder: str) -> str:
    text = normalized(folder)
    parts: list[str] = []
    position = 0
    for match in VARIABLE.finditer(text):
        parts.append(re.escape(text[position : match.start()]).replace(r"\*", r"[^\\]*"))
        parts.append(VARIABLES.get(match.group(0), r"[^\\]+"))
        position = match.end()
    parts.append(re.escape(text[position:]).replace(r"\*", r"[^\\]*"))
    pattern = "".join(parts)
    return pattern if re.match(r"[a-z]:|\[a-z\]:", pattern) else _DRIVE + pattern.removeprefix("c:")


@cache
def _folders(expected: tuple[str, ...]) -> re.Pattern[str] | None:
    """The expected locations as one expression, compiled on the DLL's first lookup (most are never looked up)."""
    return re.compile("|".join(f"(?:{_pattern(folder)})" for folder in expected)) if expected else None


@bundle_cache
def _table() -> dict[str, HijackDll]:
    return {
        name: HijackDll(
            name, entry["vendor"], tuple(entry["expected"]), tuple((path, kind) for path, kind in entry["executables"])
        )
        for name, entry in read_json(BUNDLE, DATA_FILE)["dlls"].items()
    }


def dll(name: str) -> HijackDll | None:
    """The catalogued DLL of this file name (or full path), any case."""
    return _table().get(normalized(name).rsplit("\\", 1)[-1])


@dataclass(frozen=True)
class SideLoad:
    dll: HijackDll
    folder: str  # where it was loaded from, as reported
    executable: tuple[str, str] | None  # the catalogued executable that loads it, when the loader is one


def side_load(path: str, image: str = "") -> SideLoad | None:
    """A catalogued DLL at `path` (full path) outside its expected folders, loaded by `image`; None otherwise."""
    folder, _, name = path.strip().replace("/", "\\").rpartition("\\")
    found = dll(name)
    if found is None or not folder or found.expected_in(folder):
        return None
    return SideLoad(found, folder, found.loaded_by(image) if image else None)


def warm() -> int:
    return len(_table())
