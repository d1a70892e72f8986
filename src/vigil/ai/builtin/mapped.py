"""The alert's own records and every EDR step's rows as Sigma names their fields (`vigil.evidence.sigma`): the one
reading shared by the rules that reason over mapped records (Sigma's rules, the dual-use catalogues).

Each vendor folder declares which log source a record is and which of its columns each Sigma field is; a rule here
asks for ``Image``, ``CommandLine``, ``ParentImage``, ``ImageLoaded``, ``Hashes`` or ``DestinationHostname`` and
cites the vendor's own column.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vigil.ai.builtin import vendor_knowledge
from vigil.ai.builtin.rules.endpoint import rows_of
from vigil.ai.schemas import Evidence, EvidenceKind, EvidenceStatus
from vigil.evidence.knowledge import EventRows
from vigil.evidence.sigma import SigmaAlerts, SigmaCategory
from vigil.evidence.signals import ALERT_SOURCE, AlertFacts
from vigil.knowledge.sigma.event import Event
from vigil.knowledge.sigma.formats import FORMATS


@dataclass(frozen=True)
class MappedRecord:
    """One record of a source (the alert, or a step's rows) in Sigma's field names, and where it came from."""

    source: str
    """`ALERT_SOURCE` or the step's name."""
    skill_id: str | None
    prefix: str
    """The record's locator (``evidence[1]``, ``results[3]``); a field's locator adds the vendor's column."""
    category: SigmaCategory
    event: Mapping[str, Any]
    columns: Mapping[str, str]
    """Sigma field -> the vendor column it came from."""
    row: Mapping[str, Any]
    """The record as the vendor wrote it (machine, time and other columns Sigma does not name)."""
    rows: EventRows | None = None
    """How the step's rows are read (machine columns); None for the alert's own records."""
    view: Event = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "view", Event(self.event))

    def value(self, sigma_field: str) -> str:
        """The field's first value as text, or ""."""
        return next(iter(self.view.values(sigma_field) or ()), "")

    def locator(self, sigma_field: str) -> str:
        return ".".join(part for part in (self.prefix, self.columns.get(sigma_field, sigma_field)) if part)

    @property
    def logsources(self) -> tuple[tuple[str, str], ...]:
        return self.category.logsources

    def is_of(self, sigma_category: str) -> bool:
        return sigma_category in self.category.sources


def event_rows(skill_id: str) -> EventRows | None:
    """How the integration folders read this skill's rows as events, if they do."""
    for knowledge in vendor_knowledge.all_knowledge():
        reading = knowledge.readings.get(skill_id)
        if isinstance(reading, EventRows):
            return reading
    return None


def _alert_formats(provider: str) -> Iterator[SigmaAlerts]:
    declared = (fmt for knowledge in vendor_knowledge.all_knowledge() for fmt in knowledge.sigma_alerts)
    wanted = provider.strip().lower()
    return (fmt for fmt in (*declared, *FORMATS) if wanted in fmt.providers)


def alert_records(alert: AlertFacts, document: object) -> Iterator[MappedRecord]:
    """The records the alert's own body carries, by every format declared for its provider."""
    for fmt in _alert_formats(alert.alert_provider):
        for prefix, record in fmt.records_in(document):
            category = fmt.mapping.category(record)
            if category is not None:
                event, columns = category.event(record)
                yield MappedRecord(ALERT_SOURCE, None, prefix, category, event, columns, record)


def step_records(item: Evidence) -> list[MappedRecord]:
    """A successful step's rows, when its skill's rows map onto Sigma's log sources."""
    if item.kind is not EvidenceKind.SKILL or item.status is not EvidenceStatus.OK:
        return []
    rows = event_rows(item.skill_id or "")
    if rows is None or rows.sigma is None:
        return []
    key, found = rows_of(rows, item.step())
    records: list[MappedRecord] = []
    for index, row in enumerate(found):
        category = rows.sigma.category(row)
        if category is not None:
            event, columns = category.event(row)
            records.append(
                MappedRecord(item.step_name, item.skill_id, f"{key}[{index}]", category, event, columns, row, rows)
            )
    return records


def mapped_records(alert: AlertFacts, document: object, evidence: Sequence[Evidence]) -> Iterator[MappedRecord]:
    """The alert's records, then every step's rows, in evidence order."""
    yield from alert_records(alert, document)
    for item in evidence:
        yield from step_records(item)
