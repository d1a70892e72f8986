"""Vendor fake fixtures (defined in tests.fakes.fixtures so other test packages can import them too)."""

from tests.fakes.fixtures import (
    cloudflare_fake,
    cloudflare_server,
    mde_fake,
    mde_server,
    push_fake,
    push_server,
    slack_fake,
    slack_server,
)

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
