"""Sigma hits as evidence (rules ``SIGMA:<rule id>``): SigmaHQ's rules over the alert's own records and every
EDR step's rows, through the field mapping each format declares (`vigil.evidence.sigma`).

A hit is cited like any evidence, naming the rule's title, id and author (DRL 1.1 asks that of every view of a
match). It counts by the rule's level; one rule counts once per source (and once across sources, by the
counted-once mechanism of scoring); a source's hits add up to at most twice its strongest, so twenty rules on
one command line do not outweigh a chain of evidence. A rule's documented false positives are weighed: when
one fits the context (an administrator's account, a deployment agent's child, an approved tool, legitimate
activity the person confirmed as theirs) the hit counts for less and says why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from vigil.ai.builtin.mapped import MappedRecord, alert_records, step_records
from vigil.ai.builtin.rules.alert import DEPLOYMENT_AGENTS
from vigil.ai.builtin.rules.context import checkpoint_answer
from vigil.ai.schemas import CheckpointAnswer, Evidence, EvidenceKind, EvidenceStatus
from vigil.core.entities import Entities
from vigil.evidence import records as read
from vigil.evidence.facts import ORG_FACTS_SKILL_ID, FactKind, OrgFact, OrgFacts
from vigil.evidence.signals import ALERT_SOURCE, AlertFacts, Signal
from vigil.knowledge.sigma.event import Event
from vigil.knowledge.sigma.rules import Hit, SigmaRule, ruleset

RULE_PREFIX = "SIGMA:"
LEVEL_POINTS = {"critical": 3.0, "high": 2.0, "medium": 1.0, "low": 0.5, "informational": 0.0}
#: A source's Sigma hits add up to at most this many times its strongest hit.
SOURCE_CAP = 2.0
#: What a hit whose documented false positive fits the context still counts for.
FALSE_POSITIVE_WEIGHT = 0.25

ADMIN_NOTE = re.compile(r"\badmin(?:istrator|istrative)?s?\b", re.IGNORECASE)
INSTALL_NOTE = re.compile(r"install|updat|upgrad|deploy|setup|patch", re.IGNORECASE)
APPROVED_NOTE = re.compile(r"legitimate|approved|authori[sz]ed|allowed|sanctioned", re.IGNORECASE)
#: Any documented false positive that is legitimate activity (as opposed to "other software logs the same").
LEGITIMATE_NOTE = re.compile(
    r"admin|install|updat|deploy|legitimate|benign|approved|authori[sz]ed|expected|intended", re.IGNORECASE
)
#: Account names that say administrator by convention: ``admin``, ``adm-jdoe``, ``jdoe.adm``, ``ACME\\Administrator``.
ADMIN_ACCOUNT = re.compile(r"(?:^|[\\/._@ -])adm(?:in|inistrator)?(?:$|[\\/._@ 0-9-])", re.IGNORECASE)


@dataclass(frozen=True)
class _Context:
    """What the investigation knows that a rule's documented false positives may fit."""

    facts: OrgFacts
    entities: Entities
    confirmed_by: str | None
    """Who answered a checkpoint that the activity was theirs."""


@dataclass(frozen=True)
class _Sighting:
    """One rule matching one record of a source: where (locator, quote) and the record as Sigma named it."""

    hit: Hit
    locator: str
    quote: str
    event: Mapping[str, Any]


def counted_once(signals: Sequence[Signal]) -> frozenset[str]:
    """The Sigma rules among `signals`: each describes one fact whichever source shows it."""
    return frozenset(signal.rule for signal in signals if signal.rule.startswith(RULE_PREFIX))


def organization_facts(evidence: Sequence[Evidence]) -> OrgFacts:
    """The organization's facts the engine recorded for this investigation (none when it recorded none)."""
    return next(
        (OrgFacts.from_output(item.output) for item in evidence if item.skill_id == ORG_FACTS_SKILL_ID),
        OrgFacts(),
    )


def sigma_signals(
    alert: AlertFacts, document: object, evidence: Sequence[Evidence], entities: Entities
) -> list[Signal]:
    facts = organization_facts(evidence)
    confirmed = next(
        (
            item
            for item in evidence
            if item.kind is EvidenceKind.CHECKPOINT
            and item.status is EvidenceStatus.OK
            and checkpoint_answer(item) is CheckpointAnswer.CONFIRMED
        ),
        None,
    )
    who = (read.raw(confirmed.output or {}, "answered_by") or "the person asked") if confirmed else None
    context = _Context(facts, entities, who)
    signals = _source(ALERT_SOURCE, None, list(_sightings(alert_records(alert, document))), context)
    for item in evidence:
        records = step_records(item)
        if records:
            signals.extend(_source(item.step_name, item.skill_id, list(_sightings(records)), context))
    return signals


def _sightings(records: Iterable[MappedRecord]) -> Iterator[_Sighting]:
    for record in records:
        for hit in ruleset().match(record.event, record.logsources):
            field = next((f for f in hit.fields if record.view.values(f)), None)
            if field is None:
                continue  # it matched on what the record lacks ("not ..."): no evidence of anything
            yield _Sighting(hit, record.locator(field), ", ".join(record.view.values(field) or ()), record.event)


def _source(
    source: str,
    skill_id: str | None,
    sightings: list[_Sighting],
    context: _Context,
) -> list[Signal]:
    """One signal per rule in this source (its first sighting), capped at twice the strongest."""
    first: dict[str, _Sighting] = {}
    for sighting in sightings:
        first.setdefault(sighting.hit.rule.id, sighting)
    signals = [_signal(source, skill_id, sighting, context) for sighting in first.values()]
    total = sum(signal.points for signal in signals)
    cap = SOURCE_CAP * max((signal.points for signal in signals), default=0.0)
    if total > cap > 0:
        signals = [replace(signal, points=round(signal.points * cap / total, 2)) for signal in signals]
    return signals


def _signal(source: str, skill_id: str | None, sighting: _Sighting, context: _Context) -> Signal:
    rule = sighting.hit.rule
    where = sighting.locator if source == ALERT_SOURCE else f"{source}.{sighting.locator}"
    finding = f"[SIGMA] '{rule.title}' (id {rule.id}, level {rule.level}, author {rule.author}) matched {where}"
    points = LEVEL_POINTS.get(rule.level.lower(), 0.0)
    reason = _fitting_false_positive(rule, sighting.event, context)
    if reason is not None and points:
        points *= FALSE_POSITIVE_WEIGHT
        finding += f"; counts for less: {reason}"
    user = Event(sighting.event).values("User")
    return Signal(
        rule=f"{RULE_PREFIX}{rule.id}",
        points=points,
        finding=finding,
        source=source,
        skill_id=skill_id,
        locator=sighting.locator,
        quote=sighting.quote,
        entities=tuple(user or ()),
        techniques=rule.techniques,
        tactics=rule.tactics,
    )


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path.strip())[-1].lower()


def _fitting_false_positive(rule: SigmaRule, event: Mapping[str, Any], context: _Context) -> str | None:
    """Why the rule's own documented false positive describes this event, or None."""
    entities = context.entities
    view = Event(event)
    image = _basename(next(iter(view.values("Image") or ()), ""))
    parent = _basename(next(iter(view.values("ParentImage") or ()), ""))
    accounts = [*(view.values("User") or ()), *entities.users, *entities.emails]
    for note in rule.falsepositives:
        quoted = f"the rule's documented false positive '{note.strip()}' fits"
        admin = next((account for account in accounts if ADMIN_ACCOUNT.search(account)), None)
        if ADMIN_NOTE.search(note) and admin:
            return f"{quoted}: {admin} is an administrator account"
        if INSTALL_NOTE.search(note) and parent in DEPLOYMENT_AGENTS:
            return f"{quoted}: it was started by the software-deployment agent {parent}"
        tool = _approved_tool(context.facts, rule, (image, parent), entities)
        if APPROVED_NOTE.search(note) and tool is not None:
            return f"{quoted}: {tool.value} is an approved tool of the organization ({tool.citation()})"
        if LEGITIMATE_NOTE.search(note) and context.confirmed_by:
            return f"{quoted}: {context.confirmed_by} confirmed the activity was theirs"
    return None


def _approved_tool(facts: OrgFacts, rule: SigmaRule, processes: tuple[str, ...], entities: Entities) -> OrgFact | None:
    """An approved-tool fact naming the process (or the tool the rule is about), within the fact's scope."""
    scope = (*entities.hosts, *entities.users, *entities.emails, *entities.ips)
    found = facts.approved_tool(processes, scope)
    if found is not None:
        return found
    title = rule.title.casefold()
    named = [
        fact.value
        for fact in facts.of(FactKind.APPROVED_TOOL)
        if (name := fact.value.strip().casefold().removesuffix(".exe")) and name in title
    ]
    return facts.approved_tool(named, scope) if named else None
