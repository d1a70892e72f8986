"""The KQL the Defender fake accepts: a syntax check of the advanced-hunting subset Vigil's playbooks send.

Real advanced hunting refuses a query it cannot parse (HTTP 400) and never answers one that names a table it does
not have; a fake that returned rows for any text would hide a playbook that sends broken KQL. This is a small
recursive-descent parser of tabular expressions (a table or ``union`` of tables, then ``| where``, ``project``,
``extend``, ``summarize``, ``take``/``limit``, ``top``, ``order by``/``sort by``, ``distinct``, ``count``,
``join``) over scalar expressions (comparisons including the string operators, ``and``/``or``, parentheses,
quoted strings with escapes, numbers, timespans, ``datetime(...)``, function calls such as ``ago()``). Columns
are not checked: Defender's schema has hundreds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Defender for Endpoint's advanced hunting tables (the schema reference's Device* and alert tables).
TABLES = frozenset(
    {
        "AlertEvidence",
        "AlertInfo",
        "DeviceEvents",
        "DeviceFileCertificateInfo",
        "DeviceFileEvents",
        "DeviceImageLoadEvents",
        "DeviceInfo",
        "DeviceLogonEvents",
        "DeviceNetworkEvents",
        "DeviceNetworkInfo",
        "DeviceProcessEvents",
        "DeviceRegistryEvents",
        "DeviceTvmSecureConfigurationAssessment",
        "DeviceTvmSoftwareInventory",
        "DeviceTvmSoftwareVulnerabilities",
    }
)
#: Binary operators between two scalars (the ``!`` forms negate; ``_cs`` are case-sensitive).
_STRING_OPERATORS = frozenset(
    f"{negation}{name}{case}"
    for name in ("has", "contains", "startswith", "endswith", "hasprefix", "hassuffix")
    for negation in ("", "!")
    for case in ("", "_cs")
)
_COMPARISONS = frozenset({"==", "!=", "=~", "!~", "<", "<=", ">", ">="}) | _STRING_OPERATORS
#: Operators taking a parenthesised list on their right.
_LIST_OPERATORS = frozenset({"in", "in~", "!in", "!in~", "has_any", "has_all"})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%"})

_TOKEN = re.compile(
    r"""(?P<space>\s+|//[^\n]*)
    |(?P<datetime>datetime\s*\([^)]*\))
    |(?P<string>@"(?:[^"]|"")*"|@'(?:[^']|'')*'|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    |(?P<open_string>@?["'])
    |(?P<number>\d+(?:\.\d+)?(?:microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|ticks?|ms|d|h|m|s)?(?![\w]))
    |(?P<word>!?[A-Za-z_][A-Za-z0-9_]*~?)
    |(?P<symbol>==|!=|=~|!~|<=|>=|\.\.|[-|,;()\[\]{}=<>.+*/%:])
    """,
    re.VERBOSE,
)


class KqlError(ValueError):
    """What advanced hunting answers for a query it refuses (the ``message`` of its 400 error body)."""


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    line: int
    column: int


def _tokens(query: str) -> list[_Token]:
    tokens: list[_Token] = []
    position, line, line_start = 0, 1, 0
    while position < len(query):
        match = _TOKEN.match(query, position)
        column = position - line_start + 1
        if match is None or match.lastgroup == "open_string":
            raise _syntax_error(query[position : position + 20], line, column)
        kind, text = str(match.lastgroup), match.group()
        if kind != "space":
            tokens.append(_Token(kind, text, line, column))
        newlines = text.count("\n")
        if newlines:
            line += newlines
            line_start = position + text.rindex("\n") + 1
        position = match.end()
    tokens.append(_Token("end", "", line, position - line_start + 1))
    return tokens


def _syntax_error(text: str, line: int, column: int) -> KqlError:
    """Kusto's SYN0002 wording, as advanced hunting returns it."""
    return KqlError(f"Syntax error: Query could not be parsed at '{text}' on line [{line},{column}]")


class _Parser:
    def __init__(self, query: str) -> None:
        self.tokens = _tokens(query)
        self.index = 0
        self.unknown_tables: list[str] = []

    # --- token helpers -------------------------------------------------------------------------------------
    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def at(self, *texts: str) -> bool:
        return self.current.text in texts and self.current.kind in ("word", "symbol")

    def advance(self) -> _Token:
        token = self.current
        if token.kind != "end":
            self.index += 1
        return token

    def fail(self) -> KqlError:
        token = self.current
        return _syntax_error(token.text, token.line, token.column)

    def expect(self, *texts: str) -> _Token:
        if not self.at(*texts):
            raise self.fail()
        return self.advance()

    def name(self) -> str:
        if self.current.kind != "word" or self.current.text.startswith("!") or self.current.text.endswith("~"):
            raise self.fail()
        return self.advance().text

    def accept(self, *texts: str) -> bool:
        if self.at(*texts):
            self.advance()
            return True
        return False

    # --- tabular expressions -------------------------------------------------------------------------------
    def query(self) -> None:
        self.tabular()
        self.accept(";")
        if self.current.kind != "end":
            raise self.fail()

    def tabular(self) -> None:
        self.source()
        while self.accept("|"):
            self.operator()

    def source(self) -> None:
        if self.accept("("):
            self.tabular()
            self.expect(")")
        elif self.accept("union"):
            self.options()
            self.tables()
        else:
            self.table()

    def tables(self) -> None:
        self.table()
        while self.accept(","):
            self.table()

    def table(self) -> None:
        if self.at("("):
            self.source()
            return
        table = self.name()
        if table not in TABLES:
            self.unknown_tables.append(table)

    def options(self) -> None:
        """``kind=inner``, ``withsource=T``, ``isfuzzy=true`` before an operator's operands."""
        while self.current.kind == "word" and self.tokens[self.index + 1].text == "=":
            self.advance()
            self.advance()
            self.name()

    def operator(self) -> None:
        word = self.name()
        if word in ("where", "filter"):
            self.expression()
        elif word == "project" and self.accept("-"):
            self.expect("away", "keep", "rename", "reorder")
            self.columns()
        elif word in ("project", "extend", "distinct"):
            self.columns()
        elif word == "summarize":
            if not self.at("by"):
                self.columns()
            if self.accept("by"):
                self.columns()
        elif word in ("take", "limit"):
            self.expression()
        elif word == "top":
            self.expression()
            self.expect("by")
            self.sort_keys()
        elif word in ("order", "sort"):
            self.expect("by")
            self.sort_keys()
        elif word == "union":
            self.options()
            self.tables()
        elif word == "join":
            self.options()
            self.expect("(")
            self.tabular()
            self.expect(")")
            self.expect("on")
            self.columns()
        elif word != "count":
            self.index -= 1
            raise self.fail()

    def columns(self) -> None:
        """``a, b = expr, c``: one or more, an assignment where ``=`` follows a name."""
        while True:
            if self.current.kind == "word" and self.tokens[self.index + 1].text == "=":
                self.advance()
                self.advance()
            self.expression()
            if not self.accept(","):
                return

    def sort_keys(self) -> None:
        while True:
            self.expression()
            self.accept("asc", "desc")
            if self.accept("nulls"):
                self.expect("first", "last")
            if not self.accept(","):
                return

    # --- scalar expressions --------------------------------------------------------------------------------
    def expression(self) -> None:
        self.conjunction()
        while self.accept("or"):
            self.conjunction()

    def conjunction(self) -> None:
        self.comparison()
        while self.accept("and"):
            self.comparison()

    def comparison(self) -> None:
        self.arithmetic()
        if self.current.text in _COMPARISONS:
            self.advance()
            self.arithmetic()
        elif self.current.text in _LIST_OPERATORS:
            self.advance()
            self.expect("(")
            self.arguments()
        elif self.accept("between", "!between"):
            self.expect("(")
            self.arithmetic()
            self.expect("..")
            self.arithmetic()
            self.expect(")")
        elif self.accept("matches"):
            self.expect("regex")
            self.arithmetic()

    def arithmetic(self) -> None:
        self.accept("-")
        self.term()
        while self.current.kind == "symbol" and self.current.text in _ARITHMETIC:
            self.advance()
            self.term()

    def arguments(self) -> None:
        """A parenthesised, comma-separated list after its ``(``; may be empty."""
        if self.accept(")"):
            return
        self.expression()
        while self.accept(","):
            self.expression()
        self.expect(")")

    def term(self) -> None:
        token = self.current
        if token.kind in ("string", "number", "datetime"):
            self.advance()
        elif self.accept("("):
            self.expression()
            self.expect(")")
        elif self.accept("["):
            if not self.accept("]"):
                self.expression()
                while self.accept(","):
                    self.expression()
                self.expect("]")
        elif token.kind == "word" and token.text not in ("and", "or", "by"):
            self.name()
            if self.accept("("):
                self.arguments()
        else:
            raise self.fail()
        while self.at(".", "["):
            if self.accept("."):
                self.name()
            else:
                self.advance()
                self.expression()
                self.expect("]")


def check(query: str) -> None:
    """Raise ``KqlError`` with advanced hunting's message when ``query`` is not valid KQL over its tables: a
    syntax error first (where Kusto's parser stops), then a table the schema does not have."""
    parser = _Parser(query)
    parser.query()
    if parser.unknown_tables:
        table = parser.unknown_tables[0]
        raise KqlError(f"Semantic error: Failed to resolve table or column expression named '{table}'")
