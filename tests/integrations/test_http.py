"""The shared outbound layer: retries, Retry-After, idempotency, transport failures and the rate limiter."""

from __future__ import annotations

import socket
import time
from email.utils import formatdate

import pytest

from tests.fakes.fixtures import CLOUDFLARE_TOKEN_VALUES, MDE_VALUES, call_skill, endpoints, push_values, vendor_urls
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import Endpoints
from vigil.integrations.http import RateLimit, RateLimiter, Slot, parse_retry_after
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.push_security.fake import PushFake


def test_retry_after_parses_seconds_and_http_dates() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    now = time.time()
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now=now) == 0.0


def test_429_retry_after_is_honoured(push_fake: PushFake) -> None:
    push_fake.fail_next(status=429, body={"message": "Too many requests"}, headers={"Retry-After": "1"})
    call_skill("List Accounts", push_values(push_fake), Endpoints(), {"max_pages": 1})
    first, second = push_fake.requests
    assert second.at - first.at >= 0.95


def test_get_is_retried_on_5xx_until_success(push_fake: PushFake) -> None:
    push_fake.fail_next(2, status=503, body={"message": "unavailable"})
    output = call_skill("List Accounts", push_values(push_fake), Endpoints(), {"max_pages": 1})
    assert output["count"] == 7 and len(push_fake.requests) == 3


def test_post_with_side_effects_is_not_retried_on_5xx(mde_fake: MdeFake) -> None:
    mde_fake.fail_next(3, status=500, path_contains="/isolate", body={"error": {"code": "InternalServerError"}})
    with pytest.raises(IntegrationError) as caught:
        call_skill(
            "Isolate Machine",
            MDE_VALUES,
            endpoints(mde_fake=mde_fake),
            {"machine_id": mde.MACHINES[0]["id"], "comment": "contain"},
        )
    assert len(mde_fake.requests_to("/isolate")) == 1  # it may have been applied; never isolate twice
    assert (caught.value.status_code, caught.value.cause, caught.value.transient) == (500, "Service issue", True)


def test_read_only_post_is_retried_on_5xx(mde_fake: MdeFake) -> None:
    mde_fake.fail_next(1, status=503, path_contains="/advancedqueries", body={"error": {"code": "x"}})
    output = call_skill(
        "Run Advanced Hunting Query",
        MDE_VALUES,
        endpoints(mde_fake=mde_fake),
        {"query": "DeviceProcessEvents | limit 1"},
    )
    assert output["row_count"] == 2 and len(mde_fake.requests_to("/advancedqueries")) == 2


def test_unreachable_vendor_is_a_transient_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(IntegrationError) as caught:
        call_skill(
            "Get Edge Audit Logs",
            CLOUDFLARE_TOKEN_VALUES,
            Endpoints(vendor_urls(cloudflare=f"http://127.0.0.1:{port}")),
        )
    assert (caught.value.code, caught.value.transient) == ("vendor_unreachable", True)
    assert caught.value.remedy and "127.0.0.1" in caught.value.remedy
    assert time.monotonic() - started < 2.0


def test_rate_limiter_allows_burst_then_spaces_and_caps_each_second() -> None:
    now = [100.0]
    limiter = RateLimiter(RateLimit(rate=10, burst=5), clock=lambda: now[0])
    slots = []
    while len(slots) < 25:
        granted = limiter.try_acquire()
        if isinstance(granted, Slot):
            limiter.finish(granted)  # an instant response: the vendor saw it at its send time
            slots.append(now[0])
        else:
            now[0] += granted
    assert slots[:5] == [100.0] * 5
    assert slots[5] == pytest.approx(100.1)
    for start in slots:
        assert sum(1 for s in slots if start <= s < start + 1.0) <= 10


def test_rate_limiter_counts_a_request_until_its_response_is_in() -> None:
    """A slow first request may reach the vendor late; the 11th waits a second past its response, not its send."""
    now = [100.0]
    limiter = RateLimiter(RateLimit(rate=10, burst=10, guard=0.0), clock=lambda: now[0])
    in_flight = [limiter.try_acquire() for _ in range(10)]
    assert all(isinstance(s, Slot) for s in in_flight)
    now[0] = 101.5  # nothing answered yet: no new send, however long ago the ten left
    assert limiter.try_acquire() == pytest.approx(0.1)
    first = in_flight[0]
    assert isinstance(first, Slot)
    limiter.finish(first)  # arrived at the vendor at some time up to 101.5
    assert limiter.try_acquire() == pytest.approx(1.0)
    now[0] = 102.5
    assert isinstance(limiter.try_acquire(), Slot)
    assert limiter.try_acquire() == pytest.approx(0.1)  # the other nine are still in flight
