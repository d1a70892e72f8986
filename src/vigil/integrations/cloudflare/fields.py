"""Cloudflare connection fields: an API Token (recommended) or the legacy Global API Key with its account email."""

from __future__ import annotations

from enum import StrEnum

from vigil.integrations.framework import ConnectionField


class AuthMethod(StrEnum):
    API_TOKEN = "api_token"  # noqa: S105 - an auth method name, not a credential
    GLOBAL_KEY = "global_key"


FIELDS: tuple[ConnectionField, ...] = (
    ConnectionField(
        name="auth_method",
        label="Authentication method",
        type="text",
        choices=(AuthMethod.API_TOKEN.value, AuthMethod.GLOBAL_KEY.value),
        default=AuthMethod.API_TOKEN.value,
        help="api_token (recommended, scoped permissions) or global_key (legacy, full account access).",
    ),
    ConnectionField(
        name="api_token",
        label="API Token",
        type="secret",
        secret=True,
        auth_methods=(AuthMethod.API_TOKEN.value,),
        help="API token from My Profile > API Tokens with the permissions of the skills you use; shown once.",
    ),
    ConnectionField(
        name="email",
        label="Authentication Email",
        type="email",
        auth_methods=(AuthMethod.GLOBAL_KEY.value,),
        help="Email address of the Cloudflare user who owns the Global API Key.",
    ),
    ConnectionField(
        name="global_api_key",
        label="Global API Key",
        type="secret",
        secret=True,
        auth_methods=(AuthMethod.GLOBAL_KEY.value,),
        help="Global API Key from My Profile > API Tokens; it grants full access to the account.",
    ),
    ConnectionField(
        name="account_id",
        label="Account ID",
        type="text",
        help="Account ID shown on the account's Overview page (32 hex characters).",
    ),
    ConnectionField(
        name="zone_id",
        label="Zone ID",
        type="text",
        required=False,
        help="Optional zone (domain) ID; when set, the connection test also checks the zone is reachable.",
    ),
)
