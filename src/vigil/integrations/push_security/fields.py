"""Push Security connection fields: the API domain (or base URL) and an API key."""

from __future__ import annotations

from vigil.integrations.framework import ConnectionField

DEFAULT_DOMAIN = "api.pushsecurity.com"

FIELDS: tuple[ConnectionField, ...] = (
    ConnectionField(
        name="domain",
        label="API domain",
        type="host",
        required=False,
        default=DEFAULT_DOMAIN,
        help=(
            "Host of the Push REST API; leave as api.pushsecurity.com unless Push gave you another. "
            "A full base URL (e.g. https://push.example.com/api/v1) is used as given. Changing it requires "
            "re-entering the API key."
        ),
    ),
    ConnectionField(
        name="api_key",
        label="API Key",
        type="secret",
        secret=True,
        help="API key from Settings > API keys in the Push admin console (Read only is enough for the skills).",
    ),
)
