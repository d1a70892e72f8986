"""The Sigma bundle as rules ready to match: validated, compiled once on first use, indexed by log source so an
event is only tried against the rules of its own kind."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vigil.knowledge.bundle import bundle_cache, read_json
from vigil.knowledge.sigma.condition import compile_condition
from vigil.knowledge.sigma.event import Event
from vigil.knowledge.sigma.values import Unsupported, compile_field, keyword_test

BUNDLE = "sigma"
RULES_FILE = "rules.json.gz"
#: A log source as the index keys it: (product, category) for endpoint telemetry, (product, service) for logs.
Source = tuple[str, str]
#: Tags naming an ATT&CK technique, software or group (``attack.t1059.001``, ``attack.s0002``), not a tactic.
_ATTACK_ID = re.compile(r"attack\.[tsg]\d")


class Logsource(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    product: str = ""
    category: str = ""
    service: str = ""

    @property
    def key(self) -> Source:
        return (self.product, self.category or self.service)


class SigmaRule(BaseModel):
    """A rule as the bundle stores it; title, id and author go wherever a match is shown (DRL 1.1)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    title: str
    author: str = "unknown"
    level: str = "informational"
    status: str = ""
    tags: tuple[str, ...] = ()
    falsepositives: tuple[str, ...] = ()
    logsource: Logsource
    detection: dict[str, Any] = Field(repr=False)
    path: str = ""

    @field_validator("falsepositives", "tags", mode="before")
    @classmethod
    def _listed(cls, value: object) -> object:
        return [value] if isinstance(value, str) else [] if value is None else value

    @property
    def techniques(self) -> tuple[str, ...]:
        """ATT&CK technique ids from the tags (``attack.t1105`` -> ``T1105``)."""
        return tuple(tag[7:].upper() for tag in self.tags if _ATTACK_ID.match(tag) and tag[7] == "t")

    @property
    def tactics(self) -> tuple[str, ...]:
        """ATT&CK tactic names from the tags (``attack.command-and-control`` -> ``command-and-control``)."""
        return tuple(tag[7:] for tag in self.tags if tag.startswith("attack.") and not _ATTACK_ID.match(tag))


#: A selection's test: the Sigma fields that made it match, or None.
SelectionTest = Callable[[Event], tuple[str, ...] | None]


def _selection(body: Any) -> SelectionTest:
    """A selection: a map (every field), a list of maps (any map) or bare keywords (a full-text search)."""
    if isinstance(body, Mapping):
        tests = tuple(compile_field(str(key), value) for key, value in body.items())
        names = tuple(str(key).split("|")[0] for key in body)
        return lambda event: names if all(test(event) for test in tests) else None
    if isinstance(body, list) and body and all(isinstance(item, Mapping) for item in body):
        alternatives = [_selection(item) for item in body]
        return lambda event: next((found for alt in alternatives if (found := alt(event)) is not None), None)
    values = body if isinstance(body, list) else [body]
    if any(isinstance(item, Mapping | list) for item in values):
        raise Unsupported("a selection mixing maps and keywords")
    keywords = keyword_test(values)
    return lambda event: () if keywords(event) else None


@dataclass(frozen=True)
class Hit:
    """A rule that matched an event, and the Sigma fields of the selections that made it match."""

    rule: SigmaRule
    fields: tuple[str, ...]


class CompiledRule:
    """One rule's detection compiled to predicates; `match` says which fields made it fire, or None."""

    def __init__(self, rule: SigmaRule) -> None:
        self.rule = rule
        detection = {key: value for key, value in rule.detection.items() if key not in ("condition", "timeframe")}
        if "timeframe" in rule.detection:
            raise Unsupported("timeframe (correlation)")
        self.selections = {name: _selection(body) for name, body in detection.items()}
        self.condition = compile_condition(rule.detection.get("condition", ""), list(self.selections))

    def match(self, event: Event) -> tuple[str, ...] | None:
        seen: dict[str, tuple[str, ...] | None] = {}

        def matched(name: str) -> bool:
            if name not in seen:
                seen[name] = self.selections[name](event)
            return seen[name] is not None

        if not self.condition.evaluate(matched):
            return None
        return tuple(dict.fromkeys(f for name in self.condition.positive for f in seen.get(name) or ()))


@dataclass(frozen=True)
class RuleSet:
    """Every compiled rule by log source, and the rules that could not be compiled (with why)."""

    by_source: Mapping[Source, tuple[CompiledRule, ...]]
    skipped: Mapping[str, str]

    @property
    def compiled(self) -> int:
        return sum(len(rules) for rules in self.by_source.values())

    def match(self, data: Mapping[str, Any], sources: Iterable[Source]) -> list[Hit]:
        """The rules of `sources` that match one event (a dict of Sigma field names, or a log record)."""
        event = Event(data)
        hits = []
        for source in dict.fromkeys(sources):
            for compiled in self.by_source.get(source, ()):
                fields = compiled.match(event)
                if fields is not None:
                    hits.append(Hit(compiled.rule, fields))
        return hits


def compile_rules(raw: Iterable[Mapping[str, Any]]) -> RuleSet:
    by_source: defaultdict[Source, list[CompiledRule]] = defaultdict(list)
    skipped: dict[str, str] = {}
    for item in raw:
        rule = SigmaRule.model_validate(item)
        try:
            compiled = CompiledRule(rule)
        except (Unsupported, ValueError, re.error) as error:  # a bad CIDR is a ValueError
            skipped[rule.id] = str(error)
            continue
        by_source[rule.logsource.key].append(compiled)
    return RuleSet({key: tuple(rules) for key, rules in by_source.items()}, skipped)


@bundle_cache
def ruleset() -> RuleSet:
    """The shipped rules, compiled on first use and kept for the process."""
    return compile_rules(read_json(BUNDLE, RULES_FILE)["rules"])
