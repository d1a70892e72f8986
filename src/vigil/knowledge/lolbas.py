"""Windows binaries with catalogued abuse (the `lolbas` bundle, LOLBAS-Project; GPL-3.0 data, read, not copied).

A command line "resembles" a catalogued abuse when it runs the same binary with every switch the catalogue's
command uses (``-urlcache`` and ``/urlcache`` alike), at least half of its other literal words (``MiniDump``,
``comsvcs.dll``) and, where the catalogue's command takes a remote URL or a share, one of those. Placeholders
(``{PATH}``, ``{CMD}``) match anything. The best-resembling command is the one with most of its literals present,
then the larger share of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vigil.knowledge.bundle import bundle_cache, read_json

BUNDLE = "lolbas"
DATA_FILE = "lolbas.json.gz"
LICENCE_FILE = "LICENSE"

TOKEN = re.compile(r'"[^"]*"|\S+')
PLACEHOLDER = re.compile(r"\{([A-Z_]+)(?::[^}]*)?\}")
DASHES = "-/\u2013\u2014\u2015"
REMOTE_URL = re.compile(r"\b(?:https?|ftp)://|\\\\[\w.-]+\\", re.IGNORECASE)
SHARE = re.compile(r"\\\\[\w.-]+\\", re.IGNORECASE)
HALF = 0.5


@dataclass(frozen=True)
class AbuseCommand:
    """One catalogued abuse command, with what a command line must hold to resemble it."""

    binary: str  # the catalogue entry's name, as cited: "Certutil.exe"
    executable: str  # the file the command runs, lower case: "certutil.exe"
    command: str
    category: str  # Download, Execute, AWL Bypass, ...
    usecase: str
    technique: str  # ATT&CK id, may be empty
    switches: tuple[str, ...]  # "-urlcache", "-f": every one must be there
    words: tuple[str, ...]  # other literals: half of them must be there
    needs_url: bool
    needs_share: bool


@dataclass(frozen=True)
class Resemblance:
    command: AbuseCommand
    matched: tuple[str, ...]  # the switches and words the command line holds


@dataclass(frozen=True)
class LolBin:
    name: str
    kind: str  # OSBinaries, OtherMSBinaries, OSLibraries, OSScripts, HonorableMentions
    paths: tuple[str, ...]


def file_name(path: str) -> str:
    return re.split(r"[\\/]", path.strip().strip("'\""))[-1].lower()


def _executable(token: str) -> str:
    name = file_name(token)
    return name if "." in name else f"{name}.exe"


def _switch(token: str) -> str:
    """``/urlcache`` and the en-dash form as ``-urlcache`` (Sigma's windash)."""
    return "-" + token[1:] if token[:1] in DASHES else token


def _compile(binary: str, raw: dict[str, str]) -> AbuseCommand | None:
    tokens = [token.strip('"') for token in TOKEN.findall(raw["command"])]
    if not tokens:
        return None
    switches: list[str] = []
    words: list[str] = []
    for token in tokens[1:]:
        for fragment in PLACEHOLDER.split(token)[0::2]:
            literal = fragment.strip("'\" ").lower()
            if len(literal) < 2 or not re.search(r"[a-z0-9]", literal):
                continue
            if literal[:1] in DASHES and len(literal) > 1:
                switches.append(_switch(literal))
            else:
                words.append(file_name(literal) if "\\" in literal else literal)
    kinds = set(PLACEHOLDER.findall(raw["command"]))
    return AbuseCommand(
        binary=binary,
        executable=_executable(tokens[0]),
        command=raw["command"],
        category=raw["category"],
        usecase=raw["usecase"],
        technique=raw["mitre"],
        switches=tuple(dict.fromkeys(switches)),
        words=tuple(dict.fromkeys(words)),
        needs_url="REMOTEURL" in kinds,
        needs_share="PATH_SMB" in kinds,
    )


@bundle_cache
def _tables() -> tuple[dict[str, LolBin], dict[str, tuple[AbuseCommand, ...]]]:
    binaries: dict[str, LolBin] = {}
    commands: dict[str, list[AbuseCommand]] = {}
    for raw in read_json(BUNDLE, DATA_FILE)["binaries"]:
        binaries[raw["name"].lower()] = LolBin(raw["name"], raw["kind"], tuple(raw["paths"]))
        for entry in raw["commands"]:
            compiled = _compile(raw["name"], entry)
            if compiled is not None:
                commands.setdefault(compiled.executable, []).append(compiled)
    return binaries, {name: tuple(found) for name, found in commands.items()}


def binary(path: str) -> LolBin | None:
    """The catalogue entry of this file (a path or file name, any case), or None."""
    return _tables()[0].get(file_name(path))


def _holds_switch(tokens: list[str], switch: str) -> bool:
    if switch.endswith((":", "=")):
        return any(token.startswith(switch) for token in tokens)
    return any(token == switch or token.startswith((f"{switch}:", f"{switch}=")) for token in tokens)


def _resemblance(command: AbuseCommand, text: str, tokens: list[str]) -> Resemblance | None:
    if command.needs_url and not REMOTE_URL.search(text):
        return None
    if command.needs_share and not SHARE.search(text):
        return None
    if not all(_holds_switch(tokens, switch) for switch in command.switches):
        return None
    words = [word for word in command.words if word in text]
    if command.words and len(words) < HALF * len(command.words):
        return None
    matched = (*command.switches, *words)
    if not matched and not (command.needs_url or command.needs_share):
        return None  # "explorer.exe {PATH}" would be any use of the binary
    return Resemblance(command, matched)


def abuse(image: str, command_line: str) -> Resemblance | None:
    """The catalogued abuse this command line resembles most, for the binary `image` (a path or file name)."""
    commands = _tables()[1].get(file_name(image), ())
    if not commands or not command_line.strip():
        return None
    text = command_line.lower()
    tokens = [_switch(token.strip('"')) for token in TOKEN.findall(text)]
    found = [r for command in commands if (r := _resemblance(command, text, tokens)) is not None]
    return max(found, key=_strength, default=None)


def _strength(resemblance: Resemblance) -> tuple[int, float]:
    """More of the command's literals present first; then the larger share of them (ties keep catalogue order)."""
    command = resemblance.command
    literals = len(command.switches) + len(command.words)
    share = len(resemblance.matched) / literals if literals else 1.0
    return len(resemblance.matched) + command.needs_url + command.needs_share, share


def warm() -> int:
    binaries, commands = _tables()
    return len(binaries) + sum(len(found) for found in commands.values())
