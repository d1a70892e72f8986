"""An integration is one folder: no line outside `integrations/<vendor>/` names a vendor (docs/architecture.md).

Code: an identifier with a vendor's id in it (`SLACK_INTEGRATION_ID`, `mde_api_url`), a string that is a vendor's
id (`"cloudflare"`) or module path, or that holds one of its skill ids (`"cloudflare.get_edge_audit_logs"`).
Prose: a comment, docstring or message naming the product ("Isolate the machine in Defender"), and a vendor id or
product name in a console template; what the analyst and the console say about a product comes from its folder.
Migrations are history and keep their names; docs and tests may name vendors.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import vigil
from vigil.integrations.catalog import all_integrations, all_skills

PACKAGE = Path(vigil.__file__).parent
INTEGRATIONS = PACKAGE / "integrations"
VENDORS = sorted(folder.name for folder in INTEGRATIONS.iterdir() if (folder / "__init__.py").is_file())
#: Short names the code has used for a vendor, beside its id.
ALIASES = {"microsoft_defender": ("mde",)}
#: Short product names people use, beside each integration's display name.
PRODUCT_ALIASES = ("Defender", "MDE")
VENDOR_ID = re.compile(rf"\b({'|'.join(VENDORS)})\b")
MODULE_PATH = re.compile(rf"vigil\.integrations\.({'|'.join(VENDORS)})(\.\w+)*(:\w+)?")
#: A vendor's own skill ids (``chat.checkpoint``, which every chat product implements, names none).
VENDOR_SKILL_IDS = sorted(skill.id for skill in all_skills() if skill.id.split(".")[0] in VENDORS)
SKILL_ID = re.compile(rf"\b({'|'.join(map(re.escape, VENDOR_SKILL_IDS))})\b")
#: Products by the names people read (case-sensitive: "slack" is also an English word, "Slack" the product).
PRODUCT_NAMES = sorted(
    {integration.name for integration in all_integrations() if integration.id in VENDORS} | {*PRODUCT_ALIASES}
)
PRODUCT_NAME = re.compile(rf"\b({'|'.join(map(re.escape, PRODUCT_NAMES))})\b")
#: Tokens holding string text (f-strings are split into parts from Python 3.12 on).
STRING_TOKENS = frozenset({tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)})


def _word_runs(vendor: str) -> list[list[str]]:
    return [vendor.split("_"), *([alias] for alias in ALIASES.get(vendor, ()))]


def _names_vendor(identifier: str) -> bool:
    """True when the snake_case words of an identifier contain a vendor's id (or alias) as a run of words."""
    words = identifier.lower().split("_")
    return any(
        words[i : i + len(run)] == run
        for vendor in VENDORS
        for run in _word_runs(vendor)
        for i in range(len(words) - len(run) + 1)
    )


def _outside_vendor_folders() -> list[Path]:
    files = []
    for path in sorted(PACKAGE.rglob("*")):
        relative = path.relative_to(PACKAGE).parts
        if len(relative) > 2 and relative[0] == "integrations" and relative[1] in VENDORS:
            continue
        if relative[:3] == ("db", "migrations", "versions"):
            continue
        if path.suffix in (".py", ".html", ".js", ".css"):
            files.append(path)
    return files


def _python_mentions(source: str) -> list[str]:
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.NAME and _names_vendor(token.string):
            found.append(f"{token.start[0]}: {token.string}")
        elif token.type in STRING_TOKENS:
            value = token.string.lstrip("rbfuRBFU").strip("'\"")
            if value in VENDORS or MODULE_PATH.fullmatch(value) or SKILL_ID.search(value) or PRODUCT_NAME.search(value):
                found.append(f"{token.start[0]}: {token.string[:60]}")
        elif token.type == tokenize.COMMENT and PRODUCT_NAME.search(token.string):
            found.append(f"{token.start[0]}: {token.string[:60]}")
    return found


def _template_mentions(source: str) -> list[str]:
    return [
        f"{number}: {line.strip()[:80]}"
        for number, line in enumerate(source.splitlines(), 1)
        if VENDOR_ID.search(line) or PRODUCT_NAME.search(line)
    ]


def test_the_vendor_list_is_the_integration_folders() -> None:
    assert {"microsoft_defender", "cloudflare", "slack", "push_security"} <= set(VENDORS)


def test_the_check_sees_each_way_of_naming_a_vendor() -> None:
    assert _names_vendor("SLACK_INTEGRATION_ID") and _names_vendor("mde_api_url") and _names_vendor("PUSH_SECURITY")
    assert not _names_vendor("push_count") and not _names_vendor("slacken")
    assert _python_mentions('x = "cloudflare"\nfrom vigil.integrations.slack import client\n')
    assert _python_mentions('importlib.import_module("vigil.integrations.slack.webhooks")\n')
    assert _python_mentions('query = "cloudflare.get_edge_audit_logs"\n')
    assert _python_mentions('plan = f"uses {x} and microsoft_defender.list_machines"\n')
    assert _python_mentions('"""Isolate the machine in Defender."""\n') and _python_mentions("x = 1  # Slack's E4\n")
    assert _template_mentions("<p>Complete the Slack setup</p>") and _template_mentions('{% if id == "slack" %}')
    assert not _python_mentions('"""Seconds of slack for jitter; a push notification (integrations/<vendor>/)."""\n')


def test_no_module_outside_a_vendor_folder_names_a_vendor() -> None:
    mentions = {}
    for path in _outside_vendor_folders():
        source = path.read_text(encoding="utf-8")
        found = _python_mentions(source) if path.suffix == ".py" else _template_mentions(source)
        if found:
            mentions[str(path.relative_to(PACKAGE))] = found
    assert not mentions, mentions
