"""One Sigma field test (``CommandLine|contains|all: [...]``) compiled once into a predicate over an `Event`.

Semantics as the Sigma specification states them: strings match case-insensitively and whole (``*`` and ``?``
are wildcards, ``\\`` escapes them), a list of values is OR unless ``|all``, and the modifiers below transform
the value before it is compared. A modifier this matcher does not know raises `Unsupported`, so a rule is either
evaluated faithfully or not at all.
"""

from __future__ import annotations

import base64
import ipaddress
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vigil.knowledge.sigma.event import Event

#: Matches one field's value (already case-folded unless the test is case-sensitive).
ValueTest = Callable[[str], bool]
FieldTest = Callable[[Event], bool]

WINDASH = ("-", "/", "\u2013", "\u2014", "\u2015")
_WINDASH_AT = re.compile(r"(?:^|(?<=\s))[-/]")
#: Flags per value windash spells out (5 ** 3 variants); the core rules have at most one or two.
_WINDASH_VARIANTS = 3
_MANY, _ONE = object(), object()
_ENCODINGS = {"wide": "utf-16-le", "utf16le": "utf-16-le", "utf16be": "utf-16-be", "utf16": "utf-16"}
_NUMERIC = {"gt": float.__gt__, "gte": float.__ge__, "lt": float.__lt__, "lte": float.__le__}
_RE_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_PLACEMENT = {"contains", "startswith", "endswith"}
#: Compared as written: Sigma's ``cased``, and base64 text (its case is its content).
_CASED = {"cased", "base64", "base64offset"}
_TRANSFORMS = {"windash", "base64", "base64offset", *_ENCODINGS}
_KNOWN = {
    "all",
    "cased",
    "re",
    "cidr",
    "exists",
    "fieldref",
    "expand",
    *_RE_FLAGS,
    *_NUMERIC,
    *_PLACEMENT,
    *_TRANSFORMS,
}


class Unsupported(ValueError):
    """A rule uses something this matcher cannot evaluate faithfully (a placeholder, an unknown modifier)."""


def _parts(value: str) -> list[str | object]:
    """A Sigma string as literal text and wildcards, with the specification's escapes (``\\*``, ``\\?``, ``\\\\``)."""
    parts: list[str | object] = []
    text: list[str] = []
    chars = iter(value)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            if following in ("*", "?", "\\"):
                text.append(following)
            else:
                text.append("\\" + following)
        elif char in "*?":
            if text:
                parts.append("".join(text))
                text = []
            parts.append(_MANY if char == "*" else _ONE)
        else:
            text.append(char)
    if text:
        parts.append("".join(text))
    return parts


@dataclass(frozen=True)
class _Pattern:
    parts: list[str | object]
    cased: bool

    def test(self) -> ValueTest:
        literal = [part for part in self.parts if isinstance(part, str)]
        inner = self.parts[1:-1] if len(self.parts) >= 2 else []
        fold = (lambda text: text) if self.cased else str.casefold
        if len(literal) == len(self.parts):
            wanted = fold("".join(literal))
            return lambda value: value == wanted
        if len(self.parts) == 1 and self.parts[0] is _MANY:
            return lambda value: True
        if self.parts[0] is _MANY and self.parts[-1] is _MANY and all(isinstance(p, str) for p in inner):
            needle = fold("".join(str(p) for p in inner))
            return lambda value: needle in value
        if self.parts[-1] is _MANY and all(isinstance(p, str) for p in self.parts[:-1]):
            prefix = fold("".join(str(p) for p in self.parts[:-1]))
            return lambda value: value.startswith(prefix)
        if self.parts[0] is _MANY and all(isinstance(p, str) for p in self.parts[1:]):
            suffix = fold("".join(str(p) for p in self.parts[1:]))
            return lambda value: value.endswith(suffix)
        if _ONE not in self.parts:
            return _in_order([fold(str(part)) for part in self.parts if part is not _MANY], self.parts)
        regex = "".join(
            ".*" if part is _MANY else "." if part is _ONE else re.escape(fold(str(part))) for part in self.parts
        )
        compiled = re.compile(regex, re.DOTALL)
        return lambda value: compiled.fullmatch(value) is not None


def _in_order(pieces: list[str], parts: list[str | object]) -> ValueTest:
    """``a*b*c`` without ``?``: the pieces in order, found left to right — linear in the value, where the same
    pattern as a backtracking regex is not (an attacker pads a command line to 256 KiB)."""
    anchored_start, anchored_end = parts[0] is not _MANY, parts[-1] is not _MANY

    def test(value: str) -> bool:
        start, end = 0, len(value)
        first, last = 0, len(pieces)
        if anchored_start:
            if not value.startswith(pieces[0]):
                return False
            start, first = len(pieces[0]), 1
        if anchored_end and last > first:
            if not value.endswith(pieces[-1]) or end - len(pieces[-1]) < start:
                return False
            end, last = end - len(pieces[-1]), last - 1
        for piece in pieces[first:last]:
            found = value.find(piece, start, end)
            if found < 0:
                return False
            start = found + len(piece)
        return True

    return test


def _windash(text: str) -> list[str]:
    """Every spelling of a Windows command-line flag: ``-x``, ``/x`` and the Unicode dashes."""
    spots = [match.start() for match in _WINDASH_AT.finditer(text)]
    if len(spots) > _WINDASH_VARIANTS:
        raise Unsupported(f"windash over {len(spots)} flags in one value")
    variants = []
    for choice in itertools.product(WINDASH, repeat=len(spots)):
        chars = list(text)
        for spot, dash in zip(spots, choice, strict=True):
            chars[spot] = dash
        variants.append("".join(chars))
    return variants


def _base64_offsets(raw: bytes) -> list[str]:
    """The three encodings of `raw` at every alignment inside a longer base64 text (Sigma's base64offset)."""
    starts, ends = (0, 2, 3), (None, -3, -2)
    return [
        base64.b64encode(b" " * shift + raw).decode("ascii")[starts[shift] : ends[(len(raw) + shift) % 3]]
        for shift in range(3)
    ]


def _encoded(text: str, modifiers: Sequence[str]) -> list[str]:
    """The value after its transforming modifiers (windash, utf-16 encodings, base64), in rule order."""
    values = [text]
    encoding = "utf-8"
    for modifier in modifiers:
        if modifier == "windash":
            values = [variant for value in values for variant in _windash(value)]
        elif modifier in _ENCODINGS:
            encoding = _ENCODINGS[modifier]
        elif modifier == "base64":
            values = [base64.b64encode(value.encode(encoding)).decode("ascii") for value in values]
        elif modifier == "base64offset":
            values = [variant for value in values for variant in _base64_offsets(value.encode(encoding))]
    return values


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _string_tests(value: Any, modifiers: Sequence[str]) -> list[ValueTest]:
    text = _as_text(value)
    if "re" in modifiers:
        flags = 0
        for name, flag in _RE_FLAGS.items():
            if name in modifiers:
                flags |= flag
        compiled = re.compile(text, flags)
        return [lambda candidate: compiled.search(candidate) is not None]
    cased = bool(_CASED & set(modifiers))
    tests: list[ValueTest] = []
    for variant in _encoded(text, modifiers):
        parts: list[str | object] = _parts(variant) if isinstance(value, str) else [variant]
        if "contains" in modifiers:
            parts = [_MANY, *parts, _MANY]
        elif "startswith" in modifiers:
            parts = [*parts, _MANY]
        elif "endswith" in modifiers:
            parts = [_MANY, *parts]
        tests.append(_Pattern(parts or [""], cased).test())
    return tests


def _cidr_test(value: Any) -> ValueTest:
    network = ipaddress.ip_network(str(value), strict=False)

    def inside(candidate: str) -> bool:
        try:
            address = ipaddress.ip_address(candidate.strip())
        except ValueError:
            return False
        return address.version == network.version and address in network

    return inside


def _numeric_test(value: Any, compare: Callable[[float, float], bool]) -> ValueTest:
    bound = float(value)

    def test(candidate: str) -> bool:
        try:
            return compare(float(candidate), bound)
        except ValueError:
            return False

    return test


def compile_field(key: str, raw_values: Any) -> FieldTest:
    """``Field|mod1|mod2: value or [values]`` as a predicate over an event."""
    field, *modifiers = key.split("|")
    unknown = set(modifiers) - _KNOWN
    if unknown:
        raise Unsupported(f"modifiers {sorted(unknown)}")
    if "expand" in modifiers:
        raise Unsupported("expand placeholders stand for the organization's own values")
    values = raw_values if isinstance(raw_values, list) else [raw_values]
    require_all = "all" in modifiers
    if "exists" in modifiers:
        wanted = _as_text(values[0]).casefold() == "true"
        return lambda event: (event.values(field) is not None) == wanted
    if "fieldref" in modifiers:
        return _fieldref(field, [str(value) for value in values], modifiers, require_all)
    if any(value is None for value in values):
        if len(values) > 1:
            raise Unsupported("null among other values")
        return lambda event: not any(event.values(field) or ())
    numeric = next((name for name in _NUMERIC if name in modifiers), None)
    tests: list[list[ValueTest]] = []
    for value in values:
        if "cidr" in modifiers:
            tests.append([_cidr_test(value)])
        elif numeric:
            tests.append([_numeric_test(value, _NUMERIC[numeric])])
        else:
            tests.append(_string_tests(value, modifiers))
    exact = numeric or {"cidr", "re", *_CASED} & set(modifiers)
    read = Event.values if exact else Event.folded
    combine = all if require_all else any

    def test(event: Event) -> bool:
        candidates = read(event, field)
        if not candidates:
            return False
        return combine(any(check(candidate) for check in group for candidate in candidates) for group in tests)

    return test


def _fieldref(field: str, others: list[str], modifiers: Sequence[str], require_all: bool) -> FieldTest:
    """``Field|fieldref: Other``: the two fields of one event compare (case-insensitively) as the modifiers say."""

    def compare(mine: str, theirs: str) -> bool:
        if "contains" in modifiers:
            return theirs in mine
        if "startswith" in modifiers:
            return mine.startswith(theirs)
        if "endswith" in modifiers:
            return mine.endswith(theirs)
        return mine == theirs

    combine = all if require_all else any

    def test(event: Event) -> bool:
        mine = event.folded(field) or ()
        return combine(any(compare(a, b) for a in mine for b in event.folded(other) or ()) for other in others)

    return test


def keyword_test(values: Sequence[Any]) -> FieldTest:
    """A selection of bare values: any of them anywhere in the event's text (a full-text search)."""
    tests = [_Pattern([_MANY, *_parts(_as_text(value)), _MANY], cased=False).test() for value in values]
    return lambda event: any(check(text) for text in event.all_text() for check in tests)
