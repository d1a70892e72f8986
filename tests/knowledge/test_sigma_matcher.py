"""The Sigma matcher against the specification's semantics and SigmaHQ's own regression samples."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from vigil.knowledge.sigma.rules import compile_rules, ruleset

SAMPLES = json.loads(gzip.decompress((Path(__file__).parent / "sigma_regression.json.gz").read_bytes()))


def _rule(detection: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return (
        {"id": "r1", "title": "t", "logsource": {"product": "windows", "category": "process_creation"}}
        | {"detection": detection}
        | extra
    )


def matches(detection: dict[str, Any], event: dict[str, Any]) -> bool:
    rules = compile_rules([_rule(detection)])
    assert not rules.skipped, rules.skipped
    return bool(rules.match(event, [("windows", "process_creation")]))


def test_strings_match_whole_and_case_insensitively_with_wildcards() -> None:
    sel = {"sel": {"Image": "C:\\Windows\\\\*\\cert?til.exe"}, "condition": "sel"}  # \\* : a backslash, then any
    assert matches(sel, {"Image": "c:\\windows\\system32\\CERTUTIL.exe"})
    assert not matches(sel, {"Image": "c:\\windows\\system32\\certutil.exe.bak"})
    assert matches({"sel": {"Image": "x.exe"}, "condition": "sel"}, {"image": "X.EXE"})  # field names too


def test_escaped_wildcards_and_backslashes_are_literal() -> None:
    unc = {"sel": {"CommandLine|contains": " \\\\\\\\"}, "condition": "sel"}  # YAML ' \\\\' = two backslashes
    assert matches(unc, {"CommandLine": "rundll32 \\\\host\\share\\x.dll"})
    assert not matches(unc, {"CommandLine": "rundll32 \\x.dll"})
    star = {"sel": {"CommandLine|endswith": "a\\*"}, "condition": "sel"}
    assert matches(star, {"CommandLine": "xa*"}) and not matches(star, {"CommandLine": "xab"})


def test_placement_modifiers_lists_or_and_all() -> None:
    any_of = {"sel": {"CommandLine|contains": ["urlcache", "verifyctl"]}, "condition": "sel"}
    assert matches(any_of, {"CommandLine": "certutil -verifyctl -f"})
    every = {"sel": {"CommandLine|contains|all": ["urlcache", "http"]}, "condition": "sel"}
    assert not matches(every, {"CommandLine": "certutil -urlcache"})
    assert matches(every, {"CommandLine": "certutil -urlcache http://x"})
    assert matches({"s": {"Image|startswith": "C:\\Users\\"}, "condition": "s"}, {"Image": "c:\\users\\a\\b.exe"})


def test_maps_are_and_lists_of_maps_are_or() -> None:
    detection = {"sel": [{"Image|endswith": "\\a.exe", "User": "x"}, {"OriginalFileName": "b.exe"}], "condition": "sel"}
    assert matches(detection, {"Image": "c:\\a.exe", "User": "X"})
    assert not matches(detection, {"Image": "c:\\a.exe", "User": "y"})
    assert matches(detection, {"OriginalFileName": "B.EXE"})


def test_windash_spells_every_flag_prefix() -> None:
    detection = {"sel": {"CommandLine|windash|contains": " -urlcache "}, "condition": "sel"}
    for dash in ("-", "/", "\u2013", "\u2014", "\u2015"):
        assert matches(detection, {"CommandLine": f"certutil {dash}urlcache -f http://x"})
    assert not matches(detection, {"CommandLine": "certutil +urlcache"})


def test_regular_expressions_with_flags() -> None:
    assert matches({"s": {"CommandLine|re": "://\\d+\\.\\d+"}, "condition": "s"}, {"CommandLine": "curl http://10.1"})
    assert not matches({"s": {"CommandLine|re": "CURL"}, "condition": "s"}, {"CommandLine": "curl"})
    assert matches({"s": {"CommandLine|re|i": "CURL"}, "condition": "s"}, {"CommandLine": "curl"})
    assert matches({"s": {"CommandLine|re|s": "a.b"}, "condition": "s"}, {"CommandLine": "a\nb"})
    assert matches({"s": {"CommandLine|re|m": "^b$"}, "condition": "s"}, {"CommandLine": "a\nb"})


def test_cidr_numbers_exists_and_null() -> None:
    assert matches({"s": {"DestinationIp|cidr": "10.0.0.0/8"}, "condition": "s"}, {"DestinationIp": "10.2.3.4"})
    assert not matches({"s": {"DestinationIp|cidr": "10.0.0.0/8"}, "condition": "s"}, {"DestinationIp": "11.0.0.1"})
    assert matches({"s": {"DestinationPort|gte": 1024}, "condition": "s"}, {"DestinationPort": "4444"})
    assert not matches({"s": {"DestinationPort|lt": 1024}, "condition": "s"}, {"DestinationPort": 4444})
    assert matches({"s": {"EventID": 4688}, "condition": "s"}, {"EventID": "4688"})
    assert matches({"s": {"Hashes|exists": False}, "condition": "s"}, {"Image": "a"})
    assert matches({"s": {"ParentImage": None}, "condition": "s"}, {"Image": "a"})
    assert not matches({"s": {"ParentImage": None}, "condition": "s"}, {"ParentImage": "b"})


def test_base64_offsets_and_utf16() -> None:
    hidden = base64.b64encode(b"xyIEX (New-Object Net.WebClient)").decode()
    detection = {"s": {"CommandLine|base64offset|contains": "IEX (New-Object"}, "condition": "s"}
    assert matches(detection, {"CommandLine": f"powershell -e {hidden}"})
    wide = base64.b64encode("Invoke-Mimikatz".encode("utf-16-le")).decode()
    assert matches({"s": {"CommandLine|wide|base64": "Invoke-Mimikatz"}, "condition": "s"}, {"CommandLine": wide})


def test_fieldref_compares_two_fields_of_the_event() -> None:
    detection = {"s": {"SubjectUserName|fieldref": "TargetUserName"}, "condition": "s"}
    assert matches(detection, {"SubjectUserName": "Alice", "TargetUserName": "alice"})
    assert not matches(detection, {"SubjectUserName": "alice", "TargetUserName": "bob"})


def test_keywords_search_the_whole_event_and_nested_fields_resolve() -> None:
    assert matches({"k": ["*mimikatz*"], "condition": "k"}, {"a": {"b": ["x", "run Mimikatz now"]}})
    detection = {"s": {"securityContext.isProxy": "true", "actor.alternateId|endswith": "@x.com"}, "condition": "s"}
    assert matches(detection, {"securityContext": {"isProxy": True}, "actor": {"alternateId": "a@X.com"}})


def test_conditions_not_parentheses_and_quantifiers() -> None:
    detection = {
        "selection_img": {"Image|endswith": "\\a.exe"},
        "selection_cli": {"CommandLine|contains": "-x"},
        "filter_main": {"User": "system"},
        "condition": "all of selection_* and not 1 of filter_*",
    }
    assert matches(detection, {"Image": "\\a.exe", "CommandLine": "a -x", "User": "bob"})
    assert not matches(detection, {"Image": "\\a.exe", "CommandLine": "a -x", "User": "SYSTEM"})
    assert not matches(detection, {"Image": "\\a.exe", "CommandLine": "a"})
    them = {"a": {"X": "1"}, "b": {"Y": "2"}, "condition": "1 of them and not (a and b)"}
    assert matches(them, {"X": "1"}) and not matches(them, {"X": "1", "Y": "2"})
    assert matches({"a": {"X": "1"}, "b": {"Y": "2"}, "condition": ["a", "b"]}, {"Y": "2"})


def test_a_hit_names_the_fields_that_made_it_match_not_its_filters() -> None:
    rules = compile_rules(
        [_rule({"sel": {"CommandLine|contains": "x"}, "filter": {"User": "y"}, "condition": "sel and not filter"})]
    )
    (hit,) = rules.match({"CommandLine": "x", "User": "z"}, [("windows", "process_creation")])
    assert hit.fields == ("CommandLine",)


@pytest.mark.parametrize(
    "detection",
    [
        {"s": {"CommandLine|expand": "%domain%"}, "condition": "s"},
        {"s": {"CommandLine|nosuchmodifier": "a"}, "condition": "s"},
        {"s": {"CommandLine": "a"}, "condition": "s | count() > 5"},
        {"s": {"CommandLine": "a"}, "condition": "other"},
    ],
)
def test_a_rule_the_matcher_cannot_evaluate_faithfully_is_skipped_not_guessed(detection: dict[str, Any]) -> None:
    rules = compile_rules([_rule(detection)])
    assert rules.compiled == 0 and list(rules.skipped) == ["r1"]


def test_rules_are_only_tried_against_their_own_log_source() -> None:
    rules = compile_rules([_rule({"s": {"CommandLine": "a"}, "condition": "s"})])
    assert not rules.match({"CommandLine": "a"}, [("okta", "okta")])


def test_every_shipped_rule_compiles() -> None:
    assert ruleset().compiled == 2183 and not ruleset().skipped


@pytest.mark.parametrize("sample", SAMPLES["samples"], ids=lambda sample: sample["title"])
def test_each_regression_sample_triggers_its_rule(sample: dict[str, Any]) -> None:
    rules = {compiled.rule.id: compiled for rules in ruleset().by_source.values() for compiled in rules}
    rule = rules[sample["id"]]
    source = [rule.rule.logsource.key]
    matched = [
        event for event in sample["events"] if any(h.rule.id == sample["id"] for h in ruleset().match(event, source))
    ]
    # Upstream's match_count undercounts a few samples whose every event plainly matches (three procdump copies).
    assert len(matched) >= sample["match_count"]
