"""How a vendor's records map onto Sigma's field names, declared by the vendor folder like a Sigma processing
pipeline: which log source a record is (by a column such as an ActionType) and which vendor column (or
columns joined) each Sigma field is. The analyst evaluates Sigma rules over the mapped record only."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vigil.evidence import records as read

#: A last path segment with a file extension names a file, not a folder.
_FILE_NAME = re.compile(r"\.[A-Za-z]{2,4}$")


@dataclass(frozen=True)
class JoinedPath:
    """A full path from a folder column and a file-name column; the folder column alone when it already ends
    with the file name (some EDRs' folder columns hold the full path, others only the folder). A folder
    column naming some other file is inconsistent, and a file name alone is no path: none then, rather than a
    wrong one."""

    folder: str
    name: str

    def read(self, record: Mapping[str, Any]) -> tuple[str, str] | None:
        folder, name = read.raw(record, self.folder), read.raw(record, self.name)
        if not folder:
            return None  # Sigma's paths are full paths: a bare file name would defeat the rules' folder filters
        separator = "/" if "/" in folder and "\\" not in folder else "\\"
        last = re.split(r"[\\/]", folder.rstrip("\\/"))[-1]
        if not name or last.lower() == name.lower():
            return folder, self.folder
        if _FILE_NAME.search(last):
            return None
        return folder.rstrip("\\/") + separator + name, self.folder


@dataclass(frozen=True)
class HashList:
    """Sigma's ``Hashes`` (``SHA256=…,MD5=…``) from one column per algorithm."""

    columns: tuple[tuple[str, str], ...]
    """(algorithm as Sigma writes it, vendor column), e.g. ("SHA256", "SHA256")."""

    def read(self, record: Mapping[str, Any]) -> tuple[str, str] | None:
        present = [(name, column, read.raw(record, column)) for name, column in self.columns]
        found = [(name, column, value) for name, column, value in present if value]
        if not found:
            return None
        return ",".join(f"{name}={value.upper()}" for name, _, value in found), found[0][1]


#: A Sigma field's source: a vendor column, the first present of several columns, or a derived value.
Source = str | tuple[str, ...] | JoinedPath | HashList


def _read(source: Source, record: Mapping[str, Any]) -> tuple[str, str] | None:
    """The field's text and the vendor column a citation points at, or None when the record lacks it."""
    if isinstance(source, JoinedPath | HashList):
        return source.read(record)
    for column in (source,) if isinstance(source, str) else source:
        value = read.raw(record, column)
        if value:
            return value, column
    return None


@dataclass(frozen=True)
class SigmaCategory:
    """Records of one Sigma log source: how to recognise them and what each Sigma field is called."""

    product: str
    sources: tuple[str, ...]
    """Sigma categories (``process_creation``; ``registry_set`` with ``registry_event``) or services (``okta``)."""
    fields: Mapping[str, Source] | None = None
    """Sigma field -> vendor column; None when the records already carry the log's own field names."""
    when: tuple[str, frozenset[str]] | None = None
    """(column, values): a record is of this category when the column holds one of the values (any case);
    an empty set means "when the column is present"; None: every record."""

    @property
    def logsources(self) -> tuple[tuple[str, str], ...]:
        return tuple((self.product, source) for source in self.sources)

    def holds(self, record: Mapping[str, Any]) -> bool:
        if self.when is None:
            return True
        column, values = self.when
        value = read.raw(record, column)
        return bool(value) and (not values or value.lower() in {v.lower() for v in values})

    def event(self, record: Mapping[str, Any]) -> tuple[Mapping[str, Any], dict[str, str]]:
        """The record as Sigma names its fields, and per Sigma field the vendor column it came from."""
        if self.fields is None:
            return record, {}
        event: dict[str, str] = {}
        columns: dict[str, str] = {}
        for sigma_field, source in self.fields.items():
            found = _read(source, record)
            if found is not None:
                event[sigma_field], columns[sigma_field] = found
        return event, columns


@dataclass(frozen=True)
class SigmaMapping:
    """A vendor's records by log source: the first category whose `when` holds for a record is the record's."""

    categories: tuple[SigmaCategory, ...]

    def category(self, record: Mapping[str, Any]) -> SigmaCategory | None:
        return next((category for category in self.categories if category.holds(record)), None)


@dataclass(frozen=True)
class SigmaAlerts:
    """Where an alert format carries records of a Sigma log source (process evidence, an audit-log event)."""

    providers: tuple[str, ...]
    """The alert_provider names the format arrives under (lower case)."""
    mapping: SigmaMapping
    records: tuple[str, ...] = ("",)
    """Dotted paths in the body to the records (a list or one object), tried in order; "" is the body itself."""

    def records_in(self, body: object) -> list[tuple[str, Mapping[str, Any]]]:
        """The records at the first path present, each with the locator prefix a citation gives it."""
        for path in self.records:
            node: object = body
            for part in path.split(".") if path else ():
                node = read.field(node, part) if isinstance(node, Mapping) else None
            if isinstance(node, list):
                return [(f"{path}[{index}]", item) for index, item in enumerate(node) if isinstance(item, Mapping)]
            if isinstance(node, Mapping):
                return [(path, node)]
        return []
