"""Tolerant readers of skill outputs.

Skill outputs are the skills' output models dumped to JSON (``machines``, ``alerts``, ``accounts``,
``entries``, ``insights``, ``results``; snake_case fields) but may also be raw vendor envelopes (OData's
``value``, a REST API's ``result``, a query's ``Results``; camelCase fields). Readers need records and
fields, not envelopes, so these find them without assuming one exact shape, and never raise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Keys that hold the list of records, in the order they are tried; the first one present wins.
_LIST_KEYS = (
    "value",
    "Results",
    "results",
    "alerts",
    "machines",
    "accounts",
    "insights",
    "issues",
    "entries",
    "items",
    "result",
    "data",
)
#: Keys that hold a single record (a lookup by id or e-mail).
_SINGLE_KEYS = ("account", "machine", "alert")


def records(output: Mapping[str, Any] | None, _depth: int = 0) -> list[dict[str, Any]]:
    """The records a skill returned (alerts, machines, rows, accounts, audit entries), possibly empty."""
    if not output or _depth > 3:
        return []
    for key in _LIST_KEYS:
        if key in output:
            value = output[key]
            if isinstance(value, list):
                return [item for item in value if isinstance(item, dict)]
            if isinstance(value, dict):
                return records(value, _depth + 1)
    for key in _SINGLE_KEYS:
        value = output.get(key)
        if isinstance(value, dict):
            return [value]
    return []


def count(output: Mapping[str, Any] | None) -> int:
    """The number of records, preferring an explicit ``count`` (the records may be a truncated page)."""
    if output is not None:
        declared = output.get("count")
        if isinstance(declared, int) and not isinstance(declared, bool) and declared >= 0:
            return declared
    return len(records(output))


def _key(name: str) -> str:
    """``riskScore``, ``risk_score`` and ``RiskScore`` are one field: vendor JSON vs. skill output models."""
    return name.replace("_", "").lower()


def text(record: Mapping[str, Any], *names: str) -> str:
    """The first present field among `names` as lower-case text (case/underscore-insensitive keys), or ""."""
    lowered = {_key(str(key)): value for key, value in record.items()}
    for name in names:
        value = lowered.get(_key(name))
        if value is not None and not isinstance(value, dict | list):
            return str(value).strip().lower()
    return ""


def nested(record: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A sub-object (``action``, ``actor``, ``metadata``) or an empty dict when absent or not an object."""
    value = record.get(name)
    return value if isinstance(value, dict) else {}


#: More digits than any real count or byte figure has (2**63 has 19): a longer run of digits is not a count.
COUNT_DIGITS = 19


def as_count(text: str) -> int | None:
    """A count written in ASCII digits, or None. ``"²".isdigit()`` is true but ``int("²")`` raises, and Python
    refuses to convert more than 4,300 digits: hostile content must never fail an investigation."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= COUNT_DIGITS else None


def field(record: Mapping[str, Any], name: str) -> Any:
    """A field's value as stored (case/underscore-insensitive name), or None."""
    wanted = _key(name)
    for key, value in record.items():
        if _key(str(key)) == wanted:
            return value
    return None


def raw(record: Mapping[str, Any], name: str) -> str:
    """A scalar field as text in its original case (for quoting), or ""."""
    value = field(record, name)
    if value is None or isinstance(value, dict | list):
        return ""
    return str(value).strip()
