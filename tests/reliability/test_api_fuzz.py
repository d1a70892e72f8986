"""Schemathesis over the generated OpenAPI against a live server: no response >= 500, every error in the one shape.

Each operation is driven in schemathesis's positive and negative modes as three callers (a key for org ACME, a
key for another org only, no key). On top of what schemathesis generates, a share of the requests is made
hostile with what once answered 500 (issue 14): lone UTF-16 surrogates and NUL in strings, integers beyond 64
bits, and known organization codes, providers and alert ids so requests reach the database instead of stopping
at a 422 for an unknown code.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode, Response
from schemathesis.core.result import Ok

from tests.reliability.record import record
from tests.support.harness import Harness
from tests.support.live_server import LiveServer
from vigil.settings import Settings

#: Examples per (operation, mode, caller) and the requests that must have been sent: the fast run splits 2,000
#: between the two databases (about 1,100 each), the long run (`make reliability`) sends 2,000 to each.
FAST, LONG = (9, 1000), (16, 2000)
HOSTILE_STRINGS = ("\ud800", "a\udfffb", "\x00", "x\x00y", "\U0001f600\ud83d")
HOSTILE_INTS = (2**63, 2**64 + 1, -(2**63) - 1, 2**70, 10**30)


@dataclass
class Tally:
    statuses: Counter[int] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(self.statuses.values())


@dataclass
class Target:
    url: str
    callers: dict[str, dict[str, str]]
    known: dict[str, list[Any]]


@pytest.fixture
def target(settings: Settings) -> Iterator[Target]:
    harness = Harness(settings)  # its TestClient is never entered: the live server runs the app's lifespan
    try:
        harness.add_org("ACME")
        harness.add_org("BETA")
        acme = harness.add_key("ACME", name="acme").api_key
        beta = harness.add_key("BETA", name="beta").api_key
        with LiveServer(harness.app) as live:
            created = requests.post(
                f"{live.url}/serviceapi/alerts",
                json=Harness.alert_body(),
                headers={"Authorization": f"Bearer {acme}"},
                timeout=10,
            )
            created.raise_for_status()
            yield Target(
                url=live.url,
                callers={
                    "acme key": {"Authorization": f"Bearer {acme}"},
                    "other org's key": {"Cookie": f"Session={beta}"},
                    "no key": {},
                },
                known={
                    "organization_code": ["ACME", "BETA"],
                    "alert_provider": ["cloudflare", "okta"],
                    "alert_ref": [created.json()["alert_id"], created.json()["alert_uuid"]],
                    "case_ref": ["ACME-1"],
                },
            )
    finally:
        harness.db.dispose()


def _hostile(value: Any, data: st.DataObject) -> Any:
    """Replace some leaves of a generated value with a hostile string or integer."""
    if isinstance(value, dict):
        return {key: _hostile(item, data) for key, item in value.items()}
    if isinstance(value, list):
        return [_hostile(item, data) for item in value]
    if isinstance(value, bool) or not data.draw(st.booleans(), label="mutate"):
        return value
    if isinstance(value, str):
        return value + data.draw(st.sampled_from(HOSTILE_STRINGS))
    if isinstance(value, int):
        return data.draw(st.sampled_from(HOSTILE_INTS))
    return value


def _steer(case: Case[Any], target: Target, data: st.DataObject) -> None:
    """Known codes and ids where a parameter or body field takes one, then hostile leaves in some requests."""
    for container in (case.path_parameters, case.query, case.body if isinstance(case.body, dict) else None):
        if not container:
            continue
        for name, values in target.known.items():
            if name in container and data.draw(st.booleans(), label=f"known {name}"):
                container[name] = data.draw(st.sampled_from(values))
    if not data.draw(st.integers(0, 2), label="hostile"):
        if isinstance(case.body, dict | list):
            case.body = _hostile(case.body, data)
        if case.query:
            case.query = _hostile(case.query, data)
        if case.path_parameters:
            case.path_parameters = {
                name: (_hostile(value, data) if isinstance(value, str) else value)
                for name, value in case.path_parameters.items()
            }


def _check(response: Response, method: str, path: str, tally: Tally) -> None:
    where = f"{method} {path} -> {response.status_code}"
    if response.status_code >= 500 and response.status_code != 503:
        tally.failures.append(f"{where}: {response.text[:300]}")
    if response.status_code == 503 and "retry-after" not in response.headers:
        tally.failures.append(f"{where} without Retry-After")
    if response.status_code >= 400:
        try:
            error = response.json()["error"]
            shaped = set(error) == {"code", "message", "details"} and isinstance(error["details"], list)
        except (ValueError, KeyError, TypeError):
            shaped = False
        if not shaped:
            tally.failures.append(f"{where}: not the one error shape: {response.text[:300]}")


def _drive(
    operation: Any,
    mode: GenerationMode,
    headers: dict[str, str],
    target: Target,
    session: requests.Session,
    tally: Tally,
    examples: int,
) -> None:
    """`examples` requests to one operation in one mode as one caller."""

    @given(case=operation.as_strategy(generation_mode=mode), data=st.data())
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def run(case: Case[Any], data: st.DataObject) -> None:
        _steer(case, target, data)
        started = time.perf_counter()
        try:
            response = case.call(base_url=target.url, session=session, headers=headers, timeout=30)
        except (requests.exceptions.InvalidHeader, UnicodeError):
            return  # the client refused to send it (a header it cannot encode): nothing reached the server
        tally.latencies.append(time.perf_counter() - started)
        tally.statuses[response.status_code] += 1
        _check(response, operation.method.upper(), operation.path, tally)

    try:
        run()
    except Unsatisfiable:
        assert mode is GenerationMode.NEGATIVE  # an operation without inputs has no invalid form


def fuzz(target: Target, tally: Tally, examples: int) -> None:
    schema = schemathesis.openapi.from_url(f"{target.url}/openapi.json")
    session = requests.Session()
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), f"the OpenAPI document does not load: {result.err()}"
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            for headers in target.callers.values():
                _drive(operation, mode, headers, target, session, tally, examples)


@pytest.mark.parametrize(
    "examples, minimum", [FAST, pytest.param(*LONG, marks=pytest.mark.reliability_long)], ids=["fast", "long"]
)
def test_openapi_fuzz_gets_no_500_and_one_error_shape(
    target: Target, backend: str, examples: int, minimum: int
) -> None:
    tally = Tally()
    started = time.monotonic()
    fuzz(target, tally, examples)
    elapsed = time.monotonic() - started
    latencies = sorted(tally.latencies)
    p99 = latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0
    over_500 = sum(n for status, n in tally.statuses.items() if status >= 500)
    spread = ", ".join(f"{status}: {n}" for status, n in sorted(tally.statuses.items()))
    suite = "" if minimum == FAST[1] else f", {minimum:,}+ per database"
    record(
        "schemathesis over the OpenAPI (positive, negative, hostile strings/ints; ACME key, other org's key, no key)"
        f"{suite}: no 500, one error shape, 503s carry Retry-After",
        tally.count,
        "requests",
        held=not tally.failures and tally.count >= minimum,
        detail=f"{over_500} of {tally.count:,} responses >= 500; {len(tally.failures)} problems; p99 {p99:.0f} ms; "
        f"{elapsed:.0f} s ({sum(latencies):.0f} s waiting for responses); statuses {spread}",
        backend=backend,
        long=minimum == LONG[1],
    )
    assert tally.count >= minimum, f"only {tally.count} requests were sent"
    assert not tally.failures, json.dumps(tally.failures[:20], indent=1)
