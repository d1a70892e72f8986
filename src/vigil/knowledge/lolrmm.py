"""Remote-management and remote-access tools (the `lolrmm` bundle, magicsword-io/LOLRMM), by executable and domain.

Being a catalogued tool says what a process or a connection *is* — AnyDesk, ScreenConnect, an RMM agent — never
that it is malicious: the same tool is the help desk's and an intruder's. Who started it decides (the RM rules).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from vigil.knowledge.bundle import bundle_cache, read_json

BUNDLE = "lolrmm"
DATA_FILE = "tools.json.gz"
LICENCE_FILE = "LICENSE"


@dataclass(frozen=True)
class RmmTool:
    name: str
    category: str  # "RMM" (remote monitoring and management) or "RAT" (remote access)
    executables: tuple[str, ...]
    domains: tuple[str, ...]


@dataclass(frozen=True)
class _Index:
    by_executable: dict[str, tuple[RmmTool, ...]]
    executable_patterns: tuple[tuple[str, RmmTool], ...]
    by_zone: dict[str, tuple[RmmTool, ...]]
    domain_patterns: tuple[tuple[str, RmmTool], ...]


def _add(index: dict[str, tuple[RmmTool, ...]], key: str, tool: RmmTool) -> None:
    if tool not in index.get(key, ()):
        index[key] = (*index.get(key, ()), tool)


@bundle_cache
def _index() -> _Index:
    by_executable: dict[str, tuple[RmmTool, ...]] = {}
    by_zone: dict[str, tuple[RmmTool, ...]] = {}
    executable_patterns: list[tuple[str, RmmTool]] = []
    domain_patterns: list[tuple[str, RmmTool]] = []
    for raw in read_json(BUNDLE, DATA_FILE)["tools"]:
        tool = RmmTool(raw["name"], raw["category"], tuple(raw["executables"]), tuple(raw["domains"]))
        for name in tool.executables:
            if "*" in name:
                executable_patterns.append((name, tool))
            else:
                _add(by_executable, name, tool)
        for domain in tool.domains:
            zone = domain.removeprefix("*.")
            if "*" in zone:
                domain_patterns.append((domain, tool))
            else:
                _add(by_zone, zone, tool)  # "*.x.com" and "x.com" alike: the zone and its subdomains
    return _Index(by_executable, tuple(executable_patterns), by_zone, tuple(domain_patterns))


def _file_name(path: str) -> str:
    return re.split(r"[\\/]", path.strip().strip("'\""))[-1].lower()


def by_executable(path: str) -> tuple[RmmTool, ...]:
    """The tools that run as this file (a full path or a file name, any case); empty for anything else."""
    name = _file_name(path)
    if not name:
        return ()
    index = _index()
    found = list(index.by_executable.get(name, ()))
    found.extend(
        tool for pattern, tool in index.executable_patterns if fnmatchcase(name, pattern) and tool not in found
    )
    return tuple(found)


def by_name(name: str) -> tuple[RmmTool, ...]:
    """The tools called `name` (``AnyDesk``, ``ScreenConnect``; any case) or running as it (``anydesk.exe``)."""
    wanted = name.strip().casefold().removesuffix(".exe")
    named = tuple(tool for tools in _index().by_executable.values() for tool in tools if tool.name.casefold() == wanted)
    return tuple(dict.fromkeys(named)) or by_executable(f"{wanted}.exe")


def by_domain(domain: str) -> tuple[RmmTool, ...]:
    """The tools that talk to this host name or a zone above it (``relay-1.net.anydesk.com`` -> AnyDesk)."""
    name = domain.strip().strip(".").lower()
    if "." not in name:
        return ()
    index = _index()
    labels = name.split(".")
    found: list[RmmTool] = []
    for i in range(len(labels) - 1):
        found.extend(tool for tool in index.by_zone.get(".".join(labels[i:]), ()) if tool not in found)
    found.extend(tool for pattern, tool in index.domain_patterns if fnmatchcase(name, pattern) and tool not in found)
    return tuple(found)


def warm() -> int:
    index = _index()
    return len(index.by_executable) + len(index.executable_patterns) + len(index.by_zone) + len(index.domain_patterns)
