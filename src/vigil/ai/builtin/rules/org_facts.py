"""The organization's own facts applied to the alert's subjects (O rules, docs/analyst.md).

The engine records the organization's active facts as the evidence item ``vigil.organization_facts``; this
reader finds the facts that cover what the alert is about — a subject address in a recorded range, a subject
account, a change window open when the event happened — and cites each with who vouches for it and until when.
A fact explains only what it covers, and the explanations yield to strong behaviours like any weak one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from vigil.ai.builtin.classify import classify
from vigil.ai.builtin.document import Field, fields_of
from vigil.core.entities import Entities, EntityKind
from vigil.evidence import records as read
from vigil.evidence.facts import FactKind, OrgFact, OrgFacts, scope_covers, scope_terms, tool_name
from vigil.evidence.knowledge import Category
from vigil.evidence.signals import AlertFacts, Explains, Signal, StepOutput
from vigil.knowledge import lolrmm

MAX_SUBJECTS = 5
#: Network facts: the rule, the points, whether it explains, and what the address is to the organization.
NETWORK_MEANING: dict[FactKind, tuple[str, float, Explains | None, str]] = {
    FactKind.AUTHORISED_SCANNER: ("O1", -4.0, Explains.WRONG_DETECTION, "the organization's authorised scanner"),
    FactKind.VPN_EGRESS: ("O2", -1.5, None, "the organization's VPN egress"),
    FactKind.OFFICE_NETWORK: ("O2", -1.5, None, "in the organization's office network"),
    FactKind.CI_NETWORK: ("O3", -1.5, Explains.AUTHORISED, "in the organization's CI/build network"),
}
#: A sign-in detection that rests on the address (anonymiser, unfamiliar location, spray source) is wrong about
#: the organization's own egress: the claim about the address is what the fact refutes.
ADDRESS_CLAIM_CATEGORIES = frozenset({Category.IDENTITY_SIGNIN})
APPROVED_TOOL_POINTS = -3.0
SERVICE_ACCOUNT_POINTS = -2.0
#: What the organization says an approval is for, in its own words: security testing makes the detection's
#: claim (an attack) wrong; any other approved use is real activity, authorised.
SECURITY_TESTING = re.compile(
    r"red[- ]team|purple[- ]team|penetration test|pen ?test|security test|adversary emulation"
    r"|attack simulation|detection (?:test|validation|engineering)|breach and attack",
    re.IGNORECASE,
)
CHANGE_WINDOW_POINTS = -3.0
#: Alerts reporting a change, which a change window can authorise (a window never explains malware).
CHANGE_CATEGORIES = frozenset({Category.ACCOUNT_CHANGE, Category.EDGE_WAF_CHANGE, Category.CLOUD_CREDENTIALS})
#: Keys holding when the event happened, as the vendors name them (normalized: lower-case, no ``_ - .``).
EVENT_TIME_KEYS = frozenset(
    {
        "eventtime", "createddatetime", "activitydatetime", "published", "timestamp", "time", "when",
        "eventfirstseen", "eventlastseen", "creationtime", "occurredat", "detecteddatetime", "firstactivity",
        "lastactivity", "createdat", "eventtimestamp", "starttime", "endtime", "date",
    }
)  # fmt: skip
EPOCH_SECONDS_DIGITS = 10
EPOCH_MILLIS_DIGITS = 13


def org_facts(item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
    """Every recorded fact that covers one of the alert's subjects."""
    facts = OrgFacts.from_output(item.output)
    if not facts.facts:
        return []
    signals = [
        signal
        for address in entities.subject(EntityKind.IPS)[:MAX_SUBJECTS]
        if (signal := _network(item, facts, address)) is not None
    ]
    category = classify(alert, entities)
    if category in ADDRESS_CLAIM_CATEGORIES:
        signals = [_refutes_address_claim(signal) for signal in signals]
    observed = observed_values(alert, entities)
    signals.extend(_accounts(item, facts, entities, observed))
    signals.extend(_approved_tools(item, facts, alert, observed))
    signals.extend(_change_windows(item, facts, alert, observed, specific_only=category not in CHANGE_CATEGORIES))
    return signals


def observed_values(alert: AlertFacts, entities: Entities) -> list[str]:
    """What a fact's scope is compared with: the alert's entities of every kind and its provider."""
    return [value for kind in EntityKind for value in entities.of(kind)] + [alert.alert_provider]


def _refutes_address_claim(signal: Signal) -> Signal:
    if signal.rule != "O2":
        return signal
    return replace(signal, explains=Explains.WRONG_DETECTION)


def _cite(
    item: StepOutput,
    fact: OrgFact,
    rule: str,
    points: float,
    finding: str,
    *,
    explains: Explains | None = None,
    entities: tuple[str, ...] = (),
    asset_value: bool = False,
) -> Signal:
    """Cited as the fact it used: the evidence item, the fact's id, its value."""
    return Signal.from_step(
        item,
        rule,
        points,
        finding,
        f"facts[{fact.id}]",
        fact.value,
        explains=explains,
        entities=entities,
        asset_value=asset_value,
    )


def _finding(subject: str, meaning: str, fact: OrgFact) -> str:
    reason = f" ({fact.reason})" if fact.reason else ""
    return f"[ORG] {subject} is {meaning} — {fact.citation()}{reason}"


def _network(item: StepOutput, facts: OrgFacts, address: str) -> Signal | None:
    fact = facts.covering_ip(address)
    if fact is None:
        return None
    rule, points, explains, meaning = NETWORK_MEANING[fact.kind]
    return _cite(item, fact, rule, points, _finding(address, meaning, fact), explains=explains, entities=(address,))


def _accounts(item: StepOutput, facts: OrgFacts, entities: Entities, observed: list[str]) -> list[Signal]:
    """A VIP raises a true positive's severity (asset value); a service account within its recorded scope is
    automation doing its job (a weak explanation: strong behaviours still condemn it)."""
    subjects = list(dict.fromkeys([*entities.subject(EntityKind.EMAILS), *entities.subject(EntityKind.USERS)]))
    signals: list[Signal] = []
    for name in subjects[:MAX_SUBJECTS]:
        if vip := facts.account(name, FactKind.VIP_ACCOUNT):
            finding = _finding(name, "a VIP account (a compromise matters more)", vip)
            signals.append(_cite(item, vip, "O4", 0.0, finding, entities=(name,), asset_value=True))
        if service := facts.account(name, FactKind.SERVICE_ACCOUNT):
            if scope_covers(service.scope, observed, service.value):
                finding = _finding(name, "a service account, here within its recorded scope", service)
                signals.append(
                    _cite(item, service, "O5", SERVICE_ACCOUNT_POINTS, finding, explains=Explains.AUTHORISED,
                          entities=(name,))
                )  # fmt: skip
            else:
                finding = _finding(name, f"a service account recorded for {service.scope}, used outside it", service)
                signals.append(_cite(item, service, "O5", 0.0, finding, entities=(name,)))
    return signals


def _approved_tools(item: StepOutput, facts: OrgFacts, alert: AlertFacts, observed: list[str]) -> list[Signal]:
    """A tool the organization approved, named in the alert, within the approval's scope, explains the alert;
    named but outside the scope, it is cited and explains nothing (the same tool is an attacker's favourite)."""
    fields = fields_of(alert.alert_content)
    signals: list[Signal] = []
    for fact in facts.of(FactKind.APPROVED_TOOL):
        tool = _tool_pattern(fact.value)
        if tool is None or lolrmm.by_name(fact.value) or not any(tool.search(field.value) for field in fields):
            continue  # remote-access tools are judged with how they were launched (dual_use RM rules)
        name = fact.value.strip()
        if not scope_covers(fact.scope, observed, fact.value):
            finding = _finding(name, f"approved only for {fact.scope}; nothing shows this use is within it", fact)
            signals.append(_cite(item, fact, "O7", 0.0, finding))
            continue
        testing = SECURITY_TESTING.search(fact.reason) is not None
        meaning = "approved security testing" if testing else "an approved tool"
        scope = f" within its scope ({fact.scope})" if fact.scope else ""
        explains = Explains.WRONG_DETECTION if testing else Explains.AUTHORISED
        finding = _finding(name, f"{meaning}{scope}", fact)
        signals.append(_cite(item, fact, "O7", APPROVED_TOOL_POINTS, finding, explains=explains))
    return signals


def _tool_pattern(value: str) -> re.Pattern[str] | None:
    """The tool's name as a word, with or without ``.exe`` (``AdFind`` matches ``C:\\Tools\\AdFind.exe``)."""
    name = tool_name(value)
    if len(name) < MIN_TOOL_NAME:
        return None
    return re.compile(rf"(?<![\w-]){re.escape(name)}(?:\.exe)?(?![\w-])", re.IGNORECASE)


MIN_TOOL_NAME = 3


def _change_windows(
    item: StepOutput, facts: OrgFacts, alert: AlertFacts, observed: list[str], *, specific_only: bool
) -> list[Signal]:
    """A change window open when the event happened, for what changed, explains an authorised change. Outside
    change alerts (an endpoint detection) a window explains only when its scope names this very machine or
    account: a window never explains malware at large."""
    for moment in event_times(fields_of(alert.alert_content)):
        for window in facts.window_at(moment):
            if specific_only and not scope_terms(window.scope, window.value):
                continue
            if scope_covers(window.scope, observed, window.value):
                scope = f" for {window.scope}" if window.scope else ""
                when = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC")
                finding = _finding(f"the change at {when}", f"inside change window {window.value}{scope}", window)
                return [_cite(item, window, "O6", CHANGE_WINDOW_POINTS, finding, explains=Explains.AUTHORISED)]
    return []


def event_times(fields: Sequence[Field]) -> list[int]:
    """When the alert says its event happened (epoch seconds), from the vendors' time fields, in order."""
    times: list[int] = []
    for field in fields:
        if field.key in EVENT_TIME_KEYS and (moment := epoch(field.value)) is not None:
            times.append(moment)
    return times


def epoch(text: str) -> int | None:
    value = text.strip()
    digits = read.as_count(value)
    if digits is not None:
        if len(value) == EPOCH_SECONDS_DIGITS:
            return digits
        return digits // 1000 if len(value) == EPOCH_MILLIS_DIGITS else None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())
