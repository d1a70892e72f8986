"""One event as Sigma reads it: field names looked up case-insensitively, dotted paths into nested objects, and
each field's values as text (a list gives several), each computed once per event."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

#: Windows' longest command line (32,767 characters): no process field is longer, so a value past it is padding,
#: and matching stops there (Sigma's regular expressions would otherwise take seconds on a 256 KiB hostile value).
MAX_VALUE_CHARS = 32_768


def _scalars(value: Any) -> Iterator[str]:
    if isinstance(value, list):
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, str):
        yield value[:MAX_VALUE_CHARS]
    elif value is not None and not isinstance(value, dict):
        yield str(value)


def _child(data: Mapping[str, Any], name: str) -> Any:
    if name in data:
        return data[name]
    wanted = name.casefold()
    return next((value for key, value in data.items() if str(key).casefold() == wanted), None)


class Event:
    """Field values of one event; `values` is None when the field is absent (or null)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self._raw: dict[str, tuple[str, ...] | None] = {}
        self._folded: dict[str, tuple[str, ...] | None] = {}
        self._all: tuple[str, ...] | None = None

    def _resolve(self, field: str) -> Any:
        direct = _child(self.data, field)
        if direct is not None or "." not in field:
            return direct
        node: Any = self.data
        for part in field.split("."):
            if isinstance(node, list):
                node = [_child(item, part) for item in node if isinstance(item, Mapping)]
            elif isinstance(node, Mapping):
                node = _child(node, part)
            else:
                return None
        return node

    def values(self, field: str) -> tuple[str, ...] | None:
        if field not in self._raw:
            found = self._resolve(field)
            self._raw[field] = None if found is None else tuple(_scalars(found))
        return self._raw[field]

    def folded(self, field: str) -> tuple[str, ...] | None:
        """The values case-folded: Sigma's string matching is case-insensitive."""
        if field not in self._folded:
            raw = self.values(field)
            self._folded[field] = None if raw is None else tuple(value.casefold() for value in raw)
        return self._folded[field]

    def all_text(self) -> tuple[str, ...]:
        """Every scalar anywhere in the event, case-folded: what keyword searches look through."""
        if self._all is None:
            found: list[str] = []
            stack: list[Any] = [self.data]
            while stack:
                node = stack.pop()
                if isinstance(node, Mapping):
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
                else:
                    found.extend(value.casefold() for value in _scalars(node))
            self._all = tuple(found)
        return self._all
