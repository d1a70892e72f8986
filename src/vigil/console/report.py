"""What the alert and case pages show as a report: human status names, measured durations, related alerts as
rows, and the evidence the verdict cites marked where it appears in the steps' output."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from markupsafe import Markup, escape
from sqlalchemy.orm import Session

from vigil.ai.schemas import Citation
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.auth.schemas import Principal
from vigil.cases import service as cases_service
from vigil.console.rendering import pretty_json
from vigil.evidence.facts import ORG_FACTS_SKILL_ID, OrgFact, OrgFacts
from vigil.integrations.catalog import RELATED_SKILL_ID, canonical_skill_id
from vigil.investigations.models import InvestigationAttempt
from vigil.investigations.service import AlertInvestigation

#: Investigation statuses as a reader names them (the list keeps the seed's spelling, e.g. "Inprogress").
STATUS_NAMES = {
    InvestigationStatus.CREATED: "Created",
    InvestigationStatus.SUBMITTED: "Submitted",
    InvestigationStatus.IN_PROGRESS: "In progress",
    InvestigationStatus.COMPLETED: "Completed",
    InvestigationStatus.FAILED: "Failed",
}
#: What each status means, next to its name on the alert page (instead of the API's number).
STATUS_MEANINGS = {
    InvestigationStatus.CREATED: "not investigated until it has an alert type",
    InvestigationStatus.SUBMITTED: "queued for an investigation",
    InvestigationStatus.IN_PROGRESS: "being investigated now",
    InvestigationStatus.COMPLETED: "investigated; the verdict is in its case",
    InvestigationStatus.FAILED: "the investigation could not finish; it can be retried",
}
#: How the related-alerts step's output names each kind of shared value.
SHARED_LABELS = {
    "users": "user",
    "emails": "email",
    "hosts": "host",
    "device_ids": "device",
    "ips": "IP",
    "sha256s": "SHA-256",
    "sha1s": "SHA-1",
    "md5s": "MD5",
    "domains": "domain",
}


class StepLike(Protocol):
    """A recorded step as both pages hold it (an `InvestigationStep` row or the API's `EvidenceOut`)."""

    @property
    def name(self) -> str: ...
    @property
    def skill_id(self) -> str | None: ...
    @property
    def output(self) -> Any: ...
    @property
    def duration_ms(self) -> int: ...


@dataclass(frozen=True)
class RelatedRow:
    """One related alert, as a table row: where to go and what it shares with this alert."""

    alert_id: str
    alert_type: str | None
    provider: str
    created_at: int | None
    case_id: str | None
    shared: list[tuple[str, str]]
    reason: str


@dataclass(frozen=True)
class RelatedAlerts:
    count: int
    rows: list[RelatedRow]
    ignored_noisy: list[tuple[str, str, int]]


@dataclass(frozen=True)
class StepView:
    """A step with what the report adds: its related alerts (for that skill) and the citations it backs."""

    step: Any
    output: Markup | None
    related: RelatedAlerts | None = None
    citations: list[Citation] = field(default_factory=list)
    facts: list[OrgFact] | None = None
    """The organization facts the investigation consulted (the ``vigil.organization_facts`` step), as rows."""


@dataclass(frozen=True)
class AttemptView:
    """One investigation attempt as the alert page reports it: measured duration, steps with their evidence."""

    attempt: InvestigationAttempt
    duration_ms: int | None
    steps: list[StepView]


def alert_report(
    session: Session, principal: Principal, alert: Alert, investigation: AlertInvestigation
) -> dict[str, object]:
    """The alert page's report parts: attempts, the content with cited values marked, status names."""
    citations = (
        load_citations(cases_service.get_case(session, principal, alert.case_id).citations) if alert.case_id else []
    )
    cited_content = alert_citations(citations)
    return {
        "attempts": [
            AttemptView(
                record.attempt, attempt_duration_ms(record.attempt, record.steps), step_views(record.steps, citations)
            )
            for record in investigation.attempts
        ],
        "content": highlighted(pretty_json(alert.alert_content), [c.quote for c in cited_content]),
        "content_citations": cited_content,
        "status_names": {int(status): name for status, name in STATUS_NAMES.items()},
        "status_meaning": STATUS_MEANINGS[InvestigationStatus(alert.investigation_status)],
    }


def load_citations(text: str | None) -> list[Citation]:
    """A case's stored citations (migration 0011); a case written before citations existed has none."""
    try:
        return [Citation.model_validate(item) for item in json.loads(text or "[]")]
    except (ValueError, TypeError):
        return []


def attempt_duration_ms(attempt: InvestigationAttempt, steps: Sequence[StepLike]) -> int | None:
    """How long a finished attempt took.

    The attempt's start and finish are whole epoch seconds, so their difference is 0 for most investigations
    (that was the "took 0 ms"); its steps are timed in milliseconds. The steps' sum is the figure unless the
    clock shows the attempt took longer than the steps by more than the timestamps' one-second resolution
    (time spent outside steps, e.g. waiting for a checkpoint), where the whole seconds are the better figure.
    """
    if attempt.finished_at is None:
        return None
    measured = sum(step.duration_ms for step in steps)
    clock = (attempt.finished_at - attempt.started_at) * 1000
    return clock if clock > measured + 1000 else measured


def _is_related(step: StepLike) -> bool:
    """A related-alerts step, by its skill id (legacy display name included) or by the built-in step's name."""
    return RELATED_SKILL_ID in {canonical_skill_id(ref) for ref in (step.skill_id or "", step.name)}


def step_views(steps: Iterable[StepLike], citations: Sequence[Citation]) -> list[StepView]:
    views = []
    for step in steps:
        cited = [c for c in citations if c.source == step.name]
        text = None if step.output is None or step.output == "" else pretty_json(step.output)
        views.append(
            StepView(
                step=step,
                output=None if text is None else highlighted(text, [c.quote for c in cited]),
                related=related_alerts(step.output) if _is_related(step) else None,
                citations=cited,
                facts=consulted_facts(step.output) if step.skill_id == ORG_FACTS_SKILL_ID else None,
            )
        )
    return views


def alert_citations(citations: Sequence[Citation]) -> list[Citation]:
    """The citations that quote the alert itself (shown against its content)."""
    return [c for c in citations if c.source == "alert"]


def highlighted(text: str, quotes: Iterable[str]) -> Markup:
    """`text` escaped, with every occurrence of a cited quote in a <mark> (quotes absent from it are skipped)."""
    spans: list[tuple[int, int]] = []
    for quote in {q for q in quotes if q}:
        start = text.find(quote)
        while start != -1:
            spans.append((start, start + len(quote)))
            start = text.find(quote, start + len(quote))
    out: list[Markup] = []
    position = 0
    for start, end in sorted(spans):
        if start < position:  # overlaps a quote already marked
            continue
        out.append(escape(text[position:start]))
        out.append(Markup('<mark class="cited">{}</mark>').format(text[start:end]))
        position = end
    out.append(escape(text[position:]))
    return Markup("").join(out)


def consulted_facts(output: Any) -> list[OrgFact] | None:
    """The facts step's output as facts (malformed entries dropped); None when it is not that output."""
    try:
        data = json.loads(output) if isinstance(output, str) else output
    except ValueError:
        return None
    return list(OrgFacts.from_output(data).facts) if isinstance(data, dict) else None


def related_alerts(output: Any) -> RelatedAlerts | None:
    """The related-alerts step's output as rows; None when it is not that output (an error, an older shape)."""
    try:
        data = json.loads(output) if isinstance(output, str) else output
        rows = [
            RelatedRow(
                alert_id=str(item["alert_id"]),
                alert_type=item.get("alert_type"),
                provider=str(item.get("alert_provider") or ""),
                created_at=item.get("created_at"),
                case_id=item.get("case_id"),
                shared=[
                    (SHARED_LABELS.get(kind, kind), value)
                    for kind, values in (item.get("shared") or {}).items()
                    for value in values
                ],
                reason=str(item.get("reason") or ""),
            )
            for item in data["alerts"]
        ]
        ignored = [
            (SHARED_LABELS.get(kind, kind), value, int(alerts))
            for kind, values in (data.get("ignored_noisy") or {}).items()
            for value, alerts in values.items()
        ]
        return RelatedAlerts(count=int(data["count"]), rows=rows, ignored_noisy=ignored)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
