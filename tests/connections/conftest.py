"""Connection tests: the app's vendor base URLs point at the loopback fakes, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fixtures import (
    FAST_RETRY,
    cloudflare_fake,
    cloudflare_server,
    mde_fake,
    mde_server,
    push_fake,
    push_server,
    slack_fake,
    slack_server,
    vendor_urls,
)
from tests.support.harness import Harness
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.http import OutboundClient
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.slack.fake import SlackFake
from vigil.settings import Settings

__all__ = [
    "cloudflare_fake",
    "cloudflare_server",
    "mde_fake",
    "mde_server",
    "push_fake",
    "push_server",
    "slack_fake",
    "slack_server",
]


@pytest.fixture
def settings(
    db_url: str,
    tmp_path: Path,
    mde_server: MdeFake,
    cloudflare_server: CloudflareFake,
    slack_server: SlackFake,
) -> Settings:
    """Overrides the suite's settings so `harness` talks to the fakes."""
    return Settings(
        database_url=db_url,
        data_dir=tmp_path / "data",
        rate_limit_per_second=10_000,
        rate_limit_burst=10_000,
        vendor_urls=vendor_urls(mde=mde_server.url, cloudflare=cloudflare_server.url, slack=slack_server.api_url),
    )


@pytest.fixture
def api(harness: Harness) -> Harness:
    """The harness with quick vendor retries, an org ACME and an all-organizations key."""
    harness.app.state.outbound = OutboundClient(retry=FAST_RETRY)
    harness.add_org("ACME")
    return harness


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def create(harness: Harness, key: str, **body: Any) -> Any:
    payload = {"organization_code": "ACME", **body}
    return harness.client.post("/serviceapi/connections", json=payload, headers=auth(key))


def assert_error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == code, body
    return body["error"]  # type: ignore[no-any-return]
