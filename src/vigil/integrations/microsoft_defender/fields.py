"""Connection fields for Microsoft Defender for Endpoint (an Entra ID app registration, client credentials)."""

from __future__ import annotations

from vigil.integrations.framework import ConnectionField

FIELDS: tuple[ConnectionField, ...] = (
    ConnectionField(
        name="tenant_id",
        label="Tenant ID",
        type="text",
        help="Directory (tenant) ID of the Entra ID tenant, a GUID or verified domain (App registration > Overview).",
    ),
    ConnectionField(
        name="client_id",
        label="Client ID",
        type="text",
        help="Application (client) ID of the multitenant app registration that has Defender API permissions.",
    ),
    ConnectionField(
        name="client_secret",
        label="Client Secret",
        type="secret",
        secret=True,
        help="The client secret's Value (shown once when created; not the Secret ID). Its expiry is set by you.",
    ),
)
