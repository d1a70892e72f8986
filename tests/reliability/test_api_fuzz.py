"""Schemathesis over the generated OpenAPI against a live server: no response >= 500, every error in the one shape.

Each operation is driven in schemathesis's positive mode as three callers (a key for org ACME, a key for another
org only, no key) and in its negative mode with the ACME key. On top of what schemathesis generates, known
organization codes, providers and alert ids steer requests past the 422 for an unknown code to the database, and
a third of the requests are made hostile with what once answered 500 (issue 14): lone UTF-16 surrogates and NUL
in strings, integers beyond 64 bits.
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
from vigil.integrations.live_server import LiveServer
from vigil.settings import Settings


@dataclass(frozen=True)
class Budget:
    """Examples per operation in each mode, and the requests the run must have sent. Negative cases cost
    schemathesis about four times a positive one to generate, so they are fewer and sent with the valid key only
    (without one, a 401 answers before any validation)."""

    positive: int
    negative: int
    minimum: int


#: The fast run splits 2,000 requests between the two databases; the long run (`make reliability`) sends 2,000+
#: to each.
FAST = Budget(positive=40, negative=6, minimum=1000)
LONG = Budget(positive=90, negative=16, minimum=2000)
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


def _known(value: Any, target: Target, data: st.DataObject) -> Any:
    """Mostly known codes and ids wherever a field takes one (batch items included), so requests get past the
    422 for an unknown organization or provider and reach the database."""
    if isinstance(value, list):
        return [_known(item, target, data) for item in value]
    if not isinstance(value, dict):
        return value
    steered = {key: _known(item, target, data) for key, item in value.items()}
    for name, choices in target.known.items():
        if name in steered and data.draw(st.integers(0, 3), label=f"known {name}"):
            steered[name] = data.draw(st.sampled_from(choices))
    return steered


def _steer(case: Case[Any], target: Target, data: st.DataObject) -> None:
    """Known codes and ids where a parameter or body field takes one, then hostile leaves in some requests."""
    case.path_parameters = _known(case.path_parameters, target, data)
    case.query = _known(case.query, target, data)
    case.body = _known(case.body, target, data)
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
    if response.status_code >= 500:  # a 503 too: nothing in this run makes the database unavailable
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
    callers: list[dict[str, str]],
    target: Target,
    session: requests.Session,
    tally: Tally,
    examples: int,
) -> None:
    """`examples` requests to one operation in one mode, each as one of `callers`."""

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
        headers = data.draw(st.sampled_from(callers), label="caller")
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


def fuzz(target: Target, tally: Tally, budget: Budget) -> None:
    schema = schemathesis.openapi.from_url(f"{target.url}/openapi.json")
    session = requests.Session()
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), f"the OpenAPI document does not load: {result.err()}"
        operation = result.ok()
        callers = list(target.callers.values())
        _drive(operation, GenerationMode.POSITIVE, callers, target, session, tally, budget.positive)
        _drive(operation, GenerationMode.NEGATIVE, callers[:1], target, session, tally, budget.negative)


@pytest.mark.parametrize("budget", [FAST, pytest.param(LONG, marks=pytest.mark.reliability_long)], ids=["fast", "long"])
def test_openapi_fuzz_gets_no_500_and_one_error_shape(target: Target, backend: str, budget: Budget) -> None:
    tally = Tally()
    started = time.monotonic()
    fuzz(target, tally, budget)
    elapsed = time.monotonic() - started
    latencies = sorted(tally.latencies)
    p99 = latencies[int(len(latencies) * 0.99)] * 1000 if latencies else 0.0
    over_500 = sum(n for status, n in tally.statuses.items() if status >= 500)
    spread = ", ".join(f"{status}: {n}" for status, n in sorted(tally.statuses.items()))
    suite = "" if budget == FAST else f", {budget.minimum:,}+ per database"
    record(
        "schemathesis over the OpenAPI (positive, negative, hostile strings/ints; ACME key, other org's key, no key)"
        f"{suite}: no 500, one error shape, 503s carry Retry-After",
        tally.count,
        "requests",
        held=not tally.failures and tally.count >= budget.minimum,
        detail=f"{over_500} of {tally.count:,} responses >= 500; {len(tally.failures)} problems; p99 {p99:.0f} ms; "
        f"{elapsed:.0f} s ({sum(latencies):.0f} s waiting for responses); statuses {spread}",
        backend=backend,
        long=budget == LONG,
    )
    assert tally.count >= budget.minimum, f"only {tally.count} requests were sent"
    assert not tally.failures, json.dumps(tally.failures[:20], indent=1)
