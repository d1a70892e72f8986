"""Hypothesis properties of the pieces hostile input reaches first: entity extraction, step-input templates, and
alert id allocation through the real intake path.

Each property counts the examples it ran and records them (tests.reliability.record) before asserting.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.reliability.record import record
from tests.support.harness import Harness
from vigil.core.entities import MAX_PER_KIND, EntityKind, extract_entities
from vigil.investigations.templates import TemplateRenderError, render_inputs

JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=20), children, max_size=5),
    max_leaves=30,
)
#: Text that looks like what extraction looks for, so examples reach every branch rather than only "no match".
INDICATORS = st.sampled_from(
    [
        "203.0.113.7",
        "10.0.0.1",
        "2001:db8::1",
        "evil.example.com",
        "hxxps://evil[.]example[.]com/a?b=c",
        "jane@acme.example",
        "d41d8cd98f00b204e9800998ecf8427e",
        "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "ACME\\jdoe",
        "user=alice host=WS-01",
        "999.1.1.1",
        "\ud800",
        "\x00",
    ]
)
PROSE = st.lists(st.text(max_size=30) | INDICATORS, max_size=12).map(" ".join)
ALERT_TEXT = (
    PROSE | JSON_VALUES.map(json.dumps) | st.dictionaries(st.text(max_size=20), PROSE, max_size=6).map(json.dumps)
)

#: Jinja syntax an attacker may write into an alert, expecting a template to evaluate it.
INJECTIONS = st.sampled_from(
    [
        "{{ 7*7 }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{% for x in range(3) %}{{ x }}{% endfor %}",
        "{{ config }}",
        "{# comment #}",
        "{% raw %}",
        "{{",
        "}}",
    ]
)
INJECTED_VALUES = st.lists(st.text(max_size=20) | INJECTIONS, min_size=1, max_size=6).map("".join)


class Runs:
    """Counts a property's examples, for the record."""

    def __init__(self) -> None:
        self.examples = 0
        self.started = time.monotonic()

    @property
    def seconds(self) -> float:
        return time.monotonic() - self.started


def test_entity_extraction_never_raises_and_is_well_formed_and_deterministic() -> None:
    runs = Runs()
    problems: list[str] = []

    @given(ALERT_TEXT)
    @settings(max_examples=400, deadline=None, database=None)
    def check(content: str) -> None:
        runs.examples += 1
        first = extract_entities(content)
        if first != extract_entities(content):
            problems.append(f"not deterministic for {content!r}")
        for kind in EntityKind:
            values = first.of(kind)
            if len(values) != len(set(values)) or len(values) > MAX_PER_KIND:
                problems.append(f"{kind} has duplicates or too many values for {content!r}")
            if not all(isinstance(v, str) and v and v.strip() == v for v in values):
                problems.append(f"{kind} has an empty or padded value for {content!r}: {values}")
            subjects = first.subject(kind)
            if values[: len(subjects)] != subjects:
                problems.append(f"{kind} subjects do not lead the list for {content!r}: {subjects} vs {values}")
        for ip in first.ips:
            try:
                ipaddress.ip_address(ip)
            except ValueError:
                problems.append(f"extracted IP {ip!r} is not an address, from {content!r}")
        json.dumps(first.model_dump())  # storable as the workflow's recorded JSON

    check()
    record(
        "Hypothesis: entity extraction over arbitrary text and JSON (never raises, well-formed, deterministic)",
        runs.examples,
        "examples",
        held=not problems,
        detail=f"{len(problems)} problems over {runs.examples} examples in {runs.seconds:.1f} s",
    )
    assert not problems, problems[:5]


def test_rendering_any_value_never_raises_or_evaluates_injected_template_syntax() -> None:
    runs = Runs()
    problems: list[str] = []

    @given(INJECTED_VALUES, INJECTED_VALUES, st.lists(INJECTED_VALUES, max_size=3))
    @settings(max_examples=400, deadline=None, database=None)
    def check(content: str, alert_type: str, ips: list[str]) -> None:
        runs.examples += 1
        context: dict[str, Any] = {
            "alert": {"alert_content": content, "alert_type": alert_type},
            "entities": {"ips": ips},
        }
        templates = {
            "content": "{{ alert.alert_content }}",
            "type": "{{ alert.alert_type }}",
            "ip": "{{ entities.ips[0] if entities.ips else '' }}",
        }
        rendered = render_inputs(templates, context)
        expected = {"content": content.strip(), "type": alert_type.strip(), "ip": ips[0].strip() if ips else ""}
        if rendered != expected:
            problems.append(f"values were not rendered verbatim: {expected!r} -> {rendered!r}")

    @given(INJECTED_VALUES)
    @settings(max_examples=200, deadline=None, database=None)
    def check_templates(template: str) -> None:
        runs.examples += 1
        try:
            render_inputs({"x": template}, {"alert": {}, "entities": {}})
        except TemplateRenderError:
            pass  # the one documented failure: the step records it
        except Exception as error:  # anything else is what the property looks for
            problems.append(f"{template!r} raised {error!r}")

    check()
    check_templates()
    record(
        "Hypothesis: step-input templates over hostile values (never raise, never evaluate injected syntax)",
        runs.examples,
        "examples",
        held=not problems,
        detail=f"{len(problems)} problems over {runs.examples} examples in {runs.seconds:.1f} s",
    )
    assert not problems, problems[:5]


SUBMISSIONS = st.lists(
    st.tuples(st.integers(0, 2), st.sampled_from(["cloudflare", "okta"]), st.integers(1, 4), st.booleans()),
    min_size=1,
    max_size=12,
)


def test_alert_ids_per_org_and_provider_are_exactly_one_to_n(harness: Harness, backend: str) -> None:
    """Any interleaving of E1 and batch submissions over organizations and providers, sent concurrently: each
    (organization, provider) gets exactly 1..n, no gap, no duplicate."""
    key = harness.add_key(name="all organizations").api_key
    headers = {"Authorization": f"Bearer {key}"}
    runs = Runs()
    problems: list[str] = []
    codes = (f"P{n:04d}" for n in itertools.count())
    alerts = 0

    def submit(org: str, provider: str, size: int, batch: bool) -> list[str]:
        body = Harness.alert_body(org=org, provider=provider)
        if batch:
            response = harness.client.post("/serviceapi/alerts/batch", json={"alerts": [body] * size}, headers=headers)
            assert response.status_code == 200, response.text
            return [item["alert"]["alert_id"] for item in response.json()["results"]]
        ids = []
        for _ in range(size):
            response = harness.client.post("/serviceapi/alerts", json=body, headers=headers)
            assert response.status_code == 201, response.text
            ids.append(response.json()["alert_id"])
        return ids

    @given(SUBMISSIONS)
    @settings(
        max_examples=12, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    def check(submissions: list[tuple[int, str, int, bool]]) -> None:
        nonlocal alerts
        runs.examples += 1
        orgs = [next(codes) for _ in range(3)]  # fresh organizations: every example starts its counters at 0
        for code in orgs:
            harness.add_org(code)
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda s: submit(orgs[s[0]], s[1], s[2], s[3]), submissions))
        numbers: dict[str, list[int]] = defaultdict(list)
        for alert_id in itertools.chain.from_iterable(results):
            prefix, _, number = alert_id.rpartition("-")
            numbers[prefix].append(int(number))
        expected: dict[str, int] = defaultdict(int)
        for org, provider, size, _ in submissions:
            expected[f"{orgs[org]}-{provider.upper()}"] += size
        alerts += sum(expected.values())
        got = {prefix: sorted(values) for prefix, values in numbers.items()}
        if got != {prefix: list(range(1, n + 1)) for prefix, n in expected.items()}:
            problems.append(f"{submissions}: {got}")

    check()
    record(
        "Hypothesis: alert ids over interleaved concurrent E1/batch submissions are exactly 1..n per "
        "(organization, provider)",
        alerts,
        "alerts",
        held=not problems,
        detail=f"{runs.examples} interleavings, {alerts} alerts, {len(problems)} with a gap or duplicate; "
        f"{runs.seconds:.1f} s",
        backend=backend,
    )
    assert not problems, problems[:3]
