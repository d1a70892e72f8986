"""The outbound-URL policy: https only, no loopback/private/link-local/CGNAT/metadata destinations (judged on every
address a name resolves to, on every attempt), redirects never followed, and the allow-list honoured.

Names are resolved through the policy's resolver; tests that need a name to resolve somewhere give it a static
resolver (a stand-in for DNS, as the loopback fakes stand in for the vendors)."""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Iterator

import pytest
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from tests.fakes.fixtures import FAST_RETRY
from vigil.integrations.errors import IntegrationError
from vigil.integrations.fakes import FakeVendor
from vigil.integrations.http import OutboundClient
from vigil.integrations.policy import IPAddress, OutboundPolicy

PUBLIC = "93.184.216.34"


class StaticResolver:
    """Answers from a table, one answer list per call in turn (the last repeats): DNS that can change its mind."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.calls.append(host)
        rounds = self.answers[host]
        answer = rounds[min(len([c for c in self.calls if c == host]), len(rounds)) - 1]
        return [ipaddress.ip_address(a) for a in answer]


class RedirectingVendor(FakeVendor):
    """Answers every request with a redirect to a private address (a vendor, or a man in the middle, gone bad)."""

    def routes(self) -> list[Route]:
        return [self.route("/v1/accounts", self._redirect, ["GET"])]

    async def _redirect(self, request: Request) -> Response:
        return RedirectResponse("http://10.0.0.7/steal", status_code=302)


@pytest.fixture(scope="module")
def redirecting() -> Iterator[RedirectingVendor]:
    fake = RedirectingVendor()
    with fake.serve():
        yield fake


STRICT = OutboundPolicy()


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://api.pushsecurity.com/v1", "must use https://"),
        ("https://localhost/v1", "this machine"),
        ("https://api.localhost:8443", "this machine"),
        ("https://127.0.0.1/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://10.1.2.3/", "private"),
        ("https://192.168.0.10/", "private"),
        ("https://169.254.169.254/latest/meta-data/", "metadata"),
        ("https://[fd00:ec2::254]/", "metadata"),
        ("https://metadata.google.internal/computeMetadata/v1/", "metadata"),
        ("https://169.254.10.1/", "link-local"),
        ("https://100.64.0.1/", "CGNAT"),
        ("https://0.0.0.0/", "unspecified"),
        ("https://224.0.0.1/", "multicast"),
        ("https://[::ffff:10.0.0.1]/", "private"),
        ("ftp://example.com/", "https:// URL"),
        ("https://exa\x00mple.com/", "not a valid URL"),
    ],
)
def test_entered_urls_are_refused_with_the_reason(url: str, words: str) -> None:
    problem = STRICT.problem(url)
    assert problem is not None and words in problem


def test_public_https_urls_pass() -> None:
    assert STRICT.problem("https://api.pushsecurity.com/v1") is None
    assert STRICT.problem(f"https://{PUBLIC}/v1") is None


def test_allow_list_takes_hosts_addresses_and_networks_and_allows_http_for_them() -> None:
    policy = OutboundPolicy(allowed=("push.internal.example", "127.0.0.1", "10.0.0.0/8", "::1"))
    assert policy.problem("http://push.internal.example/v1") is None
    assert policy.problem("http://127.0.0.1:8080/") is None
    assert policy.problem("https://10.20.30.40/") is None
    assert policy.problem("http://[::1]:9000/") is None
    assert policy.problem("https://192.168.1.1/") is not None  # not in the list: still refused
    assert policy.problem("http://other.example/") is not None


def test_a_name_is_judged_by_every_address_it_resolves_to() -> None:
    resolver = StaticResolver({"mixed.example": [[PUBLIC, "10.0.0.5"]], "good.example": [[PUBLIC]]})
    policy = OutboundPolicy(resolver=resolver)
    with pytest.raises(IntegrationError) as refused:
        asyncio.run(policy.destination("https://mixed.example/v1"))
    assert refused.value.code == "destination_refused" and not refused.value.transient
    assert "resolves to 10.0.0.5, a private address" in refused.value.message
    checked = asyncio.run(policy.destination("https://good.example:8443/v1"))
    assert str(checked.address) == PUBLIC and checked.url.host == "good.example"  # connect to what was checked


def test_allow_listed_networks_admit_names_resolving_into_them() -> None:
    resolver = StaticResolver({"push.corp.example": [["10.9.8.7"]]})
    policy = OutboundPolicy(allowed=("10.0.0.0/8",), resolver=resolver)
    assert str(asyncio.run(policy.destination("https://push.corp.example/")).address) == "10.9.8.7"


def test_dns_rebinding_to_a_private_address_is_refused_on_use_and_not_retried() -> None:
    """A name that was public when entered and now resolves to loopback is refused at the call; one lookup, no
    retry and no request sent."""
    resolver = StaticResolver({"rebind.example": [["127.0.0.1"]]})
    assert STRICT.problem("https://rebind.example/v1") is None  # nothing to see when entered

    async def call() -> None:
        async with OutboundClient(policy=OutboundPolicy(resolver=resolver), retry=FAST_RETRY) as http:
            await http.request("GET", "https://rebind.example/v1/accounts")

    with pytest.raises(IntegrationError) as refused:
        asyncio.run(call())
    assert refused.value.code == "destination_refused" and not refused.value.transient
    assert "resolves to 127.0.0.1, a loopback address" in refused.value.message
    assert resolver.calls == ["rebind.example"]


def test_loopback_fake_is_refused_without_the_allow_list(redirecting: RedirectingVendor) -> None:
    redirecting.reset()

    async def call() -> None:
        async with OutboundClient(policy=STRICT, retry=FAST_RETRY) as http:
            await http.request("GET", f"{redirecting.url}/v1/accounts")

    with pytest.raises(IntegrationError) as refused:
        asyncio.run(call())
    assert refused.value.code == "destination_refused" and "must use https://" in refused.value.message
    assert redirecting.requests == []


def test_a_redirect_to_a_private_address_is_not_followed(redirecting: RedirectingVendor) -> None:
    redirecting.reset()
    allowed = OutboundPolicy(allowed=("127.0.0.1",))

    async def call() -> None:
        async with OutboundClient(policy=allowed, retry=FAST_RETRY) as http:
            await http.request("GET", f"{redirecting.url}/v1/accounts", headers={"x-api-key": "k3y-value-123"})

    with pytest.raises(IntegrationError) as refused:
        asyncio.run(call())
    error = refused.value
    assert error.code == "redirect_not_followed" and not error.transient and error.status_code == 302
    assert "10.0.0.7" in error.message and error.remedy and "does not follow redirects" in error.remedy
    assert len(redirecting.requests) == 1  # one request, no retry, nothing sent to the redirect target


def test_a_header_value_http_cannot_carry_is_a_clear_error_not_a_crash(redirecting: RedirectingVendor) -> None:
    redirecting.reset()

    async def call(value: str) -> None:
        async with OutboundClient(policy=OutboundPolicy(allowed=("127.0.0.1",)), retry=FAST_RETRY) as http:
            await http.request("GET", f"{redirecting.url}/v1/accounts", headers={"x-api-key": value})

    for value in ("clé-non-ascii-0123", "line\r\nbreak-0123", "nul\x00byte-0123"):
        with pytest.raises(IntegrationError) as refused:
            asyncio.run(call(value))
        assert refused.value.code == "invalid_header_value" and not refused.value.transient
        assert value not in refused.value.message
    assert redirecting.requests == []
