"""A rule's ``condition`` compiled once: ``and``/``or``/``not``, parentheses, ``1 of sel*``, ``all of them``.

The compiled condition evaluates over a function that says whether a named selection matched (each selection is
evaluated at most once per event, and only when the condition needs it). Aggregations (``| count()``) are not
part of the core rules and are refused.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vigil.knowledge.sigma.values import Unsupported

Matched = Callable[[str], bool]
Condition = Callable[[Matched], bool]

_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")


@dataclass(frozen=True)
class Compiled:
    """The condition and the selections whose match supports a hit (those not only under a ``not``)."""

    evaluate: Condition
    positive: tuple[str, ...]


class _Parser:
    def __init__(self, text: str, names: Sequence[str]) -> None:
        if "|" in text:
            raise Unsupported(f"aggregation in condition {text!r}")
        self.tokens: list[str] = _TOKEN.findall(text)
        self.names = list(names)
        self.at = 0
        self.positive: list[str] = []

    def _peek(self) -> str | None:
        return self.tokens[self.at].lower() if self.at < len(self.tokens) else None

    def _take(self) -> str:
        word: str = self.tokens[self.at]
        self.at += 1
        return word

    def parse(self) -> Condition:
        condition = self._or(negated=False)
        if self._peek() is not None:
            raise Unsupported(f"unexpected {self._peek()!r} in condition")
        return condition

    def _or(self, negated: bool) -> Condition:
        terms = [self._and(negated)]
        while self._peek() == "or":
            self._take()
            terms.append(self._and(negated))
        return terms[0] if len(terms) == 1 else (lambda matched: any(term(matched) for term in terms))

    def _and(self, negated: bool) -> Condition:
        terms = [self._not(negated)]
        while self._peek() == "and":
            self._take()
            terms.append(self._not(negated))
        return terms[0] if len(terms) == 1 else (lambda matched: all(term(matched) for term in terms))

    def _not(self, negated: bool) -> Condition:
        if self._peek() == "not":
            self._take()
            inner = self._not(not negated)
            return lambda matched: not inner(matched)
        return self._atom(negated)

    def _atom(self, negated: bool) -> Condition:
        word = self._peek()
        if word is None:
            raise Unsupported("condition ends early")
        if word == "(":
            self._take()
            inner = self._or(negated)
            if self._peek() != ")":
                raise Unsupported("unbalanced parentheses in condition")
            self._take()
            return inner
        if word in ("all", "any") or word.isdigit():
            return self._quantified(negated)
        name = self._take()
        if name not in self.names:
            raise Unsupported(f"condition names an undefined selection {name!r}")
        self._note(negated, [name])
        return lambda matched: matched(name)

    def _quantified(self, negated: bool) -> Condition:
        quantity = self._take().lower()
        if self._peek() != "of" or self.at + 1 >= len(self.tokens):
            raise Unsupported(f"'{quantity}' without 'of <selections>'")
        self._take()
        pattern = self._take()
        names = (
            [name for name in self.names if not name.startswith("_")]
            if pattern.lower() == "them"
            else [name for name in self.names if fnmatch.fnmatchcase(name, pattern)]
        )
        if not names:
            raise Unsupported(f"'{pattern}' matches no selection")
        self._note(negated, names)
        if quantity == "all":
            return lambda matched: all(matched(name) for name in names)
        needed = 1 if quantity == "any" else int(quantity)
        return lambda matched: sum(1 for name in names if matched(name)) >= needed

    def _note(self, negated: bool, names: list[str]) -> None:
        if not negated:
            self.positive.extend(name for name in names if name not in self.positive)


def compile_condition(condition: str | list[str], names: Sequence[str]) -> Compiled:
    """One condition, or a list of them (any one suffices, as the specification says)."""
    texts = condition if isinstance(condition, list) else [condition]
    parsers = [_Parser(str(text), names) for text in texts]
    conditions = [parser.parse() for parser in parsers]
    positive = tuple(dict.fromkeys(name for parser in parsers for name in parser.positive))
    if len(conditions) == 1:
        return Compiled(conditions[0], positive)
    return Compiled(lambda matched: any(c(matched) for c in conditions), positive)
