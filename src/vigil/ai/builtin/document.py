"""The alert body as fields with paths: what the vendor said, where it said it (for citations).

Alert content is JSON more often than not. Rules that read vendor fields need each scalar value with the
key it sits under and a readable path (``evidence[2].processCommandLine``) to cite; plain-text alerts have
one field, ``content``. Walking is iterative and capped, so a hostile alert costs linear time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from vigil.core.entities import normalize_key

MAX_FIELDS = 5_000
#: Classification, drafting and analysis all read the same body; a few recent bodies are kept parsed.
CACHED_BODIES = 8


@dataclass(frozen=True)
class Field:
    path: str
    key: str  # lower-cased, without ``_ - .`` and spaces: ``processCommandLine`` -> ``processcommandline``
    parent: str  # the enclosing object's key, normalized the same way
    value: str


@lru_cache(maxsize=CACHED_BODIES)
def parsed(content: str) -> object | None:
    """The alert body as JSON, or None; parsed once for all the rules of one analysis (treat as read-only)."""
    try:
        document: object = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return document


@lru_cache(maxsize=CACHED_BODIES)
def fields_of(content: str) -> tuple[Field, ...]:
    """Every scalar value of a JSON body with its path; a non-JSON body is one ``content`` field."""
    document = parsed(content)
    if not isinstance(document, dict | list):
        return (Field("content", "content", "", content),)
    found: list[Field] = []
    stack: list[tuple[str, str, str, object]] = [("", "", "", document)]
    while stack and len(found) < MAX_FIELDS:
        path, key, parent, value = stack.pop()
        if isinstance(value, dict):
            children = [(f"{path}.{k}" if path else str(k), normalize_key(str(k)), key, v) for k, v in value.items()]
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend(reversed([(f"{path}[{i}]", key, parent, v) for i, v in enumerate(value)]))
        elif value is not None:
            text = value if isinstance(value, str) else json.dumps(value)
            found.append(Field(path or "content", key, parent, text))
    return tuple(found)


def values(fields: Sequence[Field], *keys: str) -> list[Field]:
    """Fields whose key is one of `keys` (normalized), in document order."""
    wanted = {normalize_key(key) for key in keys}
    return [field for field in fields if field.key in wanted]


def first(fields: Sequence[Field], *keys: str) -> Field | None:
    """The shallowest field among `keys` (top-level severity beats a nested one)."""
    matches = values(fields, *keys)
    return min(matches, key=lambda field: field.path.count(".") + field.path.count("[")) if matches else None


def name_value_pairs(document: object, depth: int = 0) -> list[tuple[str, str]]:
    """Every ``{name|key: N, value: V}`` object of the document with string N and V (bounded depth)."""
    if depth > MAX_PAIR_DEPTH:
        return []
    if isinstance(document, list):
        return [pair for item in document[:MAX_PAIR_ITEMS] for pair in name_value_pairs(item, depth + 1)]
    if not isinstance(document, dict):
        return []
    keys = {normalize_key(str(key)): value for key, value in document.items()}
    name = keys.get("name", keys.get("key"))
    pairs: list[tuple[str, str]] = []
    if isinstance(name, str) and isinstance(keys.get("value"), str):
        pairs.append((normalize_key(name), str(keys["value"]).strip()))
    return pairs + [pair for value in document.values() for pair in name_value_pairs(value, depth + 1)]


MAX_PAIR_DEPTH = 8
MAX_PAIR_ITEMS = 200
