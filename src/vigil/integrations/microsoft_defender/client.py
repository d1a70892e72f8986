"""Defender for Endpoint client: Entra ID client-credentials token (cached per connection) and the /api calls.

Failures map to the seed's table (401 invalid token, 403 consent, 400 request format, 500 service issue); token
endpoint AADSTS codes map to the precise credential that is wrong.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import httpx

from vigil.integrations.errors import UNEXPECTED_RESPONSE, Failure, IntegrationError, generic_status_failure
from vigil.integrations.framework import SkillContext, VendorUrl
from vigil.integrations.http import json_or_none
from vigil.integrations.pagination import follow_odata_next_links

#: Entra ID's token endpoint host, and the Defender API (regional hosts such as api-eu.… via VIGIL_VENDOR_URLS).
AUTH_URL = VendorUrl("microsoft_defender.auth_url", "https://login.microsoftonline.com")
API_URL = VendorUrl("microsoft_defender.api_url", "https://api.securitycenter.microsoft.com")

INVALID_TOKEN = Failure("invalid_token", "Invalid token", "Regenerate the token and check credentials.")
INSUFFICIENT_PERMISSIONS = Failure(
    "insufficient_permissions", "Insufficient API permissions", "Grant administrator consent."
)
BAD_REQUEST = Failure("bad_request", "Incorrect request format", "Verify endpoint and headers.")
NOT_FOUND = Failure("not_found", "Not found", "Check the machine or alert ID; it may have been removed.")
SERVICE_ISSUE = Failure("service_issue", "Service issue", "Retry later.", transient=True)

_STATUS_FAILURES = {400: BAD_REQUEST, 401: INVALID_TOKEN, 403: INSUFFICIENT_PERMISSIONS, 404: NOT_FOUND}
_CODE_FAILURES = {
    "ActiveRequestAlreadyExists": Failure(
        "live_response_busy",
        "A live response session is already running on this machine",
        "Wait for it to finish or cancel it in the Defender portal, then retry.",
    ),
}

_AAD_CODE_FAILURES = {
    7000215: Failure(
        "invalid_client_secret",
        "Invalid client secret",
        "Copy the secret's Value (not its Secret ID) from Certificates & secrets, or create a new secret.",
    ),
    7000222: Failure(
        "client_secret_expired", "Client secret expired", "Create a new client secret and update the connection."
    ),
    7000216: Failure("client_secret_missing", "Client secret missing", "Enter the client secret value."),
    7000218: Failure("client_secret_missing", "Client secret missing", "Enter the client secret value."),
    700016: Failure(
        "unknown_client_id",
        "Unknown client ID",
        "Check the Application (client) ID and that the app is consented in this tenant.",
    ),
    90002: Failure("unknown_tenant", "Tenant not found", "Check the Directory (tenant) ID of the app registration."),
    900023: Failure(
        "invalid_tenant_id", "Invalid tenant ID", "Enter the Directory (tenant) ID as a GUID or verified domain."
    ),
    70011: Failure(
        "invalid_scope", "Invalid scope", "Check the configured Defender API URL; the scope is <API URL>/.default."
    ),
    500011: Failure(
        "api_not_in_tenant",
        "Defender for Endpoint not available in tenant",
        "Check the tenant's Defender for Endpoint licence and grant administrator consent to the app.",
    ),
}
_AAD_ERROR_FAILURES = {
    "invalid_client": Failure(
        "invalid_client", "Invalid client credentials", "Check the client ID and client secret value."
    ),
    "unauthorized_client": _AAD_CODE_FAILURES[700016],
    "invalid_tenant": _AAD_CODE_FAILURES[90002],
}
TOKEN_REJECTED = Failure(
    "token_request_failed", "Token request rejected", "Check the tenant ID, client ID and client secret."
)


def token_error(response: httpx.Response) -> IntegrationError:
    """Map an Entra ID token failure body (error, error_codes, error_description) to the wrong credential."""
    body = json_or_none(response)
    body = body if isinstance(body, dict) else {}
    codes = [c for c in body.get("error_codes", []) if isinstance(c, int)]
    error = str(body.get("error") or "")
    failure = next((_AAD_CODE_FAILURES[c] for c in codes if c in _AAD_CODE_FAILURES), None)
    failure = failure or _AAD_ERROR_FAILURES.get(error) or generic_status_failure(response.status_code)
    failure = failure or TOKEN_REJECTED
    summary = str(body.get("error_description") or "").splitlines()[0] if body.get("error_description") else ""
    label = f"AADSTS{codes[0]}" if codes else error or f"HTTP {response.status_code}"
    message = f"Microsoft Entra ID rejected the token request ({label})"
    return failure.error(f"{message}: {summary}" if summary else f"{message}.", response.status_code)


def api_error(response: httpx.Response, method: str, path: str) -> IntegrationError:
    """Map a Defender API error envelope ``{"error": {"code", "message", "target"}}`` to the seed's causes."""
    body = json_or_none(response)
    error = body.get("error") if isinstance(body, dict) else None
    code = str(error.get("code") or "") if isinstance(error, dict) else ""
    text = str(error.get("message") or "") if isinstance(error, dict) else ""
    failure = _CODE_FAILURES.get(code) or _STATUS_FAILURES.get(response.status_code)
    if failure is None:
        failure = SERVICE_ISSUE if response.status_code >= 500 else generic_status_failure(response.status_code)
    failure = failure or BAD_REQUEST
    detail = f"{code}: {text}" if code or text else f"HTTP {response.status_code}"
    return failure.error(f"Defender API {method} {path} failed ({detail.strip(': ')})", response.status_code)


def odata_literal(value: str) -> str:
    """An OData string literal; single quotes are escaped by doubling."""
    return "'" + value.replace("'", "''") + "'"


class DefenderClient:
    """Calls the Defender API for one connection; the token is cached in the shared HTTP layer by connection."""

    def __init__(self, ctx: SkillContext) -> None:
        self._ctx = ctx
        self._tenant = ctx.require("tenant_id", "Tenant ID")
        self._client_id = ctx.require("client_id", "Client ID")
        self._secret = ctx.require("client_secret", "Client Secret")
        self.api_url = ctx.endpoints.url(API_URL)
        fingerprint = hashlib.sha256(f"{self._tenant}\0{self._client_id}\0{self._secret}".encode()).hexdigest()
        # Keyed by credentials too, so editing a connection never reuses a token issued for the old values.
        self._cache_key = f"microsoft_defender:{ctx.connection_key}:{fingerprint[:16]}"

    async def _fetch_token(self) -> tuple[str, float]:
        url = f"{self._ctx.endpoints.url(AUTH_URL)}/{quote(self._tenant, safe='')}/oauth2/v2.0/token"
        response = await self._ctx.http.request(
            "POST",
            url,
            data={
                "client_id": self._client_id,
                "client_secret": self._secret,
                "grant_type": "client_credentials",
                "scope": f"{self.api_url}/.default",
            },
            idempotent=True,
            redactor=self._ctx.redactor,
        )
        if response.status_code != 200:
            raise token_error(response)
        body = json_or_none(response)
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise UNEXPECTED_RESPONSE.error("The token endpoint answered without an access_token.", 200)
        expires_in = body.get("expires_in", 3599)
        return token, float(expires_in) if isinstance(expires_in, int | float | str) else 3599.0

    async def token(self) -> str:
        return await self._ctx.http.tokens.get(self._cache_key, self._fetch_token)

    async def call(
        self,
        method: str,
        url_or_path: str,
        *,
        params: Mapping[str, str] | None = None,
        json: Any = None,
        idempotent: bool | None = None,
    ) -> httpx.Response:
        """One API call with the cached token; a 401 refreshes the token once and retries once."""
        url = url_or_path if url_or_path.startswith(("http://", "https://")) else self.api_url + url_or_path
        path = httpx.URL(url).path
        for attempt in (1, 2):
            token = await self.token()
            response = await self._ctx.http.request(
                method,
                url,
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                params=params,
                json=json,
                idempotent=idempotent,
                redactor=self._ctx.redactor,  # learns the vendor-issued bearer token
            )
            if response.status_code == 401 and attempt == 1:
                self._ctx.http.tokens.invalidate(self._cache_key, token)
                continue
            if response.is_success:
                return response
            raise api_error(response, method, path)
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def get_json(self, url_or_path: str, params: Mapping[str, str] | None = None) -> Mapping[str, Any]:
        response = await self.call("GET", url_or_path, params=params)
        return self.json_object(response)

    async def post_json(self, path: str, body: Any, *, idempotent: bool = False) -> Mapping[str, Any]:
        response = await self.call("POST", path, json=body, idempotent=idempotent)
        return self.json_object(response)

    async def list(self, path: str, params: Mapping[str, str], *, max_items: int) -> list[dict[str, Any]]:
        """A list endpoint's ``value`` items, following ``@odata.nextLink`` up to ``max_items``."""
        return await follow_odata_next_links(self.get_json, self.api_url + path, params, max_items=max_items)

    @staticmethod
    def json_object(response: httpx.Response) -> Mapping[str, Any]:
        body = json_or_none(response)
        if not isinstance(body, dict):
            raise UNEXPECTED_RESPONSE.error("Defender API answered with a non-JSON body.", response.status_code)
        return body
