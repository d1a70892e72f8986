"""magicsword-io/LOLRMM -> the `lolrmm` bundle: remote-management and remote-access tools by executable and domain.

One YAML file per tool (``yaml/*.yaml``). Kept per tool: its name and category (RMM or RAT), the executable names
it runs as (``Details.PEMetadata`` file names and the file names ending ``.exe`` in ``Details.InstallationPaths``;
names with ``*`` stay patterns) and the domains it talks to (``Artifacts.Network[].Domains``: a leading ``*.``
means the zone and its subdomains; placeholders such as ``<operator-configured server>``, bare addresses and
ports are dropped; a regular expression's character classes become ``*``). A wildcard zone that several tools
name, a code-hosting platform's own hosts (GitHub, its raw content and container registry) and the bare zone of a
cloud platform (``amazonaws.com``; a tenant's own host under it stays) say nothing about any one tool and are
dropped, and so are file names too generic to name a tool (``setup.exe``, ``agent.exe``, Windows' ``dwm.exe``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from _licensed import write_licensed_bundle
from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance
from vigil.knowledge.lolrmm import BUNDLE, DATA_FILE, LICENCE_FILE

PIN = Pin(repo="magicsword-io/LOLRMM", commit="3c75cf091b10bf7e8ecd576055c44d172b35ff21")
EXECUTABLE = re.compile(r"^[\w .()*+&-]+\.exe$", re.IGNORECASE)
REGEX_PART = re.compile(r"\[[^\]]*\](?:\{\d+(?:,\d*)?\}|[+*?])?")
HOST = re.compile(r"^[a-z0-9*](?:[a-z0-9*-]*[a-z0-9*])?(?:\.[a-z0-9*](?:[a-z0-9*-]*[a-z0-9*])?)+$")
ADDRESS = re.compile(r"^[\d.*]+$")
#: Platforms whose every host is the platform's (a tool downloading from GitHub is not GitHub being the tool).
PLATFORM_HOSTS = ("github.com", "githubusercontent.com", "ghcr.io")
#: Cloud platforms whose subdomains are tenants (a bucket, a web app): the bare zone is nobody's in particular.
CLOUD_ZONES = frozenset(
    {"amazonaws.com", "windows.net", "azurewebsites.net", "cloudflare.net", "cloudflarestorage.com", "googleapis.com"}
)
#: File names that name no tool: installers, generic words, two-letter names, Windows' own binaries.
GENERIC_EXECUTABLES = frozenset(
    {
        "setup.exe", "installer.exe", "agent.exe", "upload.exe", "connect.exe", "update.exe", "client.exe",
        "service.exe", "dwm.exe", "rd.exe", "rv.exe", "si.exe", "dd.exe", "rdp.exe", "clm.exe",
    }
)  # fmt: skip


def _listed(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def executables(details: dict[str, Any]) -> list[str]:
    """The file names a tool runs as, lower case."""
    names: set[str] = set()
    for meta in _listed(details.get("PEMetadata")):
        if isinstance(meta, dict):
            names.update(str(meta.get(key) or "") for key in ("Filename", "OriginalFileName"))
    for path in _listed(details.get("InstallationPaths")):
        names.add(re.split(r"[\\/]", str(path).strip().strip("'\""))[-1])
    kept = {name.strip().lower() for name in names if EXECUTABLE.match(name.strip())}
    return sorted(kept - GENERIC_EXECUTABLES)


def domain(raw: str) -> str | None:
    """A catalogue domain as the bundle keeps it (``*.anydesk.com``, ``relay-*.net.anydesk.com``), or None."""
    text = REGEX_PART.sub("*", str(raw).strip().lower())
    text = re.sub(r"^[a-z]+://", "", text).split("/")[0].split(":")[0].strip(".")
    if not HOST.match(text) or ADDRESS.match(text) or text.count("*") > 2:
        return None
    zone = text.removeprefix("*.")
    if any(zone == host or zone.endswith(f".{host}") for host in PLATFORM_HOSTS) or zone in CLOUD_ZONES:
        return None
    return text


def _tool(document: dict[str, Any]) -> dict[str, Any]:
    details = document.get("Details") or {}
    artifacts = document.get("Artifacts") or {}
    domains = {
        found
        for network in _listed(artifacts.get("Network"))
        if isinstance(network, dict)
        for raw in _listed(network.get("Domains"))
        if (found := domain(str(raw))) is not None
    }
    return {
        "name": str(document["Name"]).strip(),
        "category": str(document.get("Category") or "RMM").strip(),
        "executables": executables(details),
        "domains": sorted(domains),
    }


def build(tree: GitTree, out: Path) -> Provenance:
    tools = [_tool(yaml.safe_load(tree.text(path))) for path in tree.files("yaml") if path.endswith((".yaml", ".yml"))]
    shared = Counter(found for tool in tools for found in set(tool["domains"]) if found.startswith("*."))
    for tool in tools:
        tool["domains"] = [found for found in tool["domains"] if shared.get(found, 0) < 2]
    tools.sort(key=lambda tool: tool["name"].lower())
    return write_licensed_bundle(
        out,
        tree,
        PIN,
        name=BUNDLE,
        title="LOLRMM: remote-management and remote-access tools (executables, domains)",
        licence="Apache-2.0",
        licence_file=LICENCE_FILE,
        counts={
            "tools": len(tools),
            "rat_tools": sum(1 for tool in tools if tool["category"].upper() == "RAT"),
            "executables": len({name for tool in tools for name in tool["executables"]}),
            "domains": len({found for tool in tools for found in tool["domains"]}),
        },
        notes="A tool's presence is context, weighed by who started it (docs/analyst.md, RM rules).",
        payloads={DATA_FILE: {"tools": tools}},
    )
