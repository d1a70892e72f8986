"""Pytest fixtures and helpers for the vendor fakes, importable by any test package's conftest.

Servers start once per session; each test gets its fake reset (requests, injected failures, controls).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any, TypeVar

import pytest

from vigil.integrations import runner
from vigil.integrations.cloudflare import fake as cloudflare
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.framework import ConnectionTestResult, Endpoints, SkillContext
from vigil.integrations.http import OutboundClient, RetryPolicy
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.push_security import fake as push
from vigil.integrations.push_security.fake import PushFake
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack.fake import SlackFake

T = TypeVar("T")

FAST_RETRY = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05, max_retry_after=5.0)

MDE_VALUES = mde.CONNECTION_VALUES
CLOUDFLARE_TOKEN_VALUES = cloudflare.CONNECTION_VALUES
CLOUDFLARE_KEY_VALUES = {
    "auth_method": "global_key",
    "email": cloudflare.EMAIL,
    "global_api_key": cloudflare.GLOBAL_KEY,
    "account_id": cloudflare.ACCOUNT_ID,
}
PUSH_VALUES = {"api_key": push.READ_KEY}


slack_values = slack.connection_values
push_values = push.connection_values


def vendor_urls(*, mde: str | None = None, cloudflare: str | None = None, slack: str | None = None) -> dict[str, str]:
    """`VIGIL_VENDOR_URLS` pointing the given vendors at loopback fakes (the rest keep their public defaults)."""
    urls: dict[str, str] = {}
    if mde:
        urls |= {"microsoft_defender.auth_url": mde, "microsoft_defender.api_url": mde}
    if cloudflare:
        urls["cloudflare.api_url"] = cloudflare
    if slack:
        urls["slack.api_url"] = slack
    return urls


def endpoints(
    *,
    mde_fake: MdeFake | None = None,
    cloudflare_fake: CloudflareFake | None = None,
    slack_fake: SlackFake | None = None,
) -> Endpoints:
    """Endpoints pointing at whichever fakes are given (the rest keep the public defaults)."""
    return Endpoints(
        vendor_urls(
            mde=mde_fake.url if mde_fake else None,
            cloudflare=cloudflare_fake.url if cloudflare_fake else None,
            slack=slack_fake.api_url if slack_fake else None,
        )
    )


def run_with_client(body: Callable[[OutboundClient], Awaitable[T]], *, retry: RetryPolicy = FAST_RETRY) -> T:
    """Run ``body`` in a fresh event loop with its own OutboundClient (sync tests, no pytest-asyncio)."""

    async def main() -> T:
        async with OutboundClient(retry=retry) as http:
            return await body(http)

    return asyncio.run(main())


def context(
    http: OutboundClient, values: Mapping[str, str], ends: Endpoints, connection_key: str = "conn-test"
) -> SkillContext:
    return SkillContext(values=dict(values), connection_key=connection_key, endpoints=ends, http=http)


def call_skill(
    skill_id: str,
    values: Mapping[str, str],
    ends: Endpoints,
    inputs: Mapping[str, Any] | None = None,
    *,
    retry: RetryPolicy = FAST_RETRY,
) -> dict[str, Any]:
    """``run_skill`` once against a fake, as a playbook step would."""
    return run_with_client(
        lambda http: runner.run_skill(skill_id, context(http, values, ends), inputs or {}), retry=retry
    )


def check_connection(
    integration_id: str, values: Mapping[str, str], ends: Endpoints, *, retry: RetryPolicy = FAST_RETRY
) -> ConnectionTestResult:
    """Authenticate/Test once against a fake."""
    return run_with_client(
        lambda http: runner.test_connection(integration_id, context(http, values, ends)), retry=retry
    )


@pytest.fixture(scope="session")
def mde_server() -> Iterator[MdeFake]:
    fake = MdeFake()
    with fake.serve():
        yield fake


@pytest.fixture(scope="session")
def cloudflare_server() -> Iterator[CloudflareFake]:
    fake = CloudflareFake()
    with fake.serve():
        yield fake


@pytest.fixture(scope="session")
def slack_server() -> Iterator[SlackFake]:
    fake = SlackFake()
    with fake.serve():
        yield fake


@pytest.fixture(scope="session")
def push_server() -> Iterator[PushFake]:
    fake = PushFake()
    with fake.serve():
        yield fake


@pytest.fixture
def mde_fake(mde_server: MdeFake) -> MdeFake:
    mde_server.reset()
    return mde_server


@pytest.fixture
def cloudflare_fake(cloudflare_server: CloudflareFake) -> CloudflareFake:
    cloudflare_server.reset()
    return cloudflare_server


@pytest.fixture
def slack_fake(slack_server: SlackFake) -> SlackFake:
    slack_server.reset()
    return slack_server


@pytest.fixture
def push_fake(push_server: PushFake) -> PushFake:
    push_server.reset()
    return push_server
