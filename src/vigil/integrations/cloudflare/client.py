"""Cloudflare API v4 client: both auth methods, the ``success``/``errors`` envelope and its error-code mapping.

Cloudflare publishes no status table, so failures are classified by error code first (see docs/integrations.md),
then by HTTP status; "not found" is attributed to the account or zone from the request path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from vigil.integrations.cloudflare.fields import AuthMethod
from vigil.integrations.errors import RATE_LIMITED, Failure, IntegrationError, generic_status_failure
from vigil.integrations.framework import SkillContext, VendorUrl
from vigil.integrations.http import json_or_none
from vigil.integrations.pagination import PageInfo, collect_pages

INVALID_API_KEY = Failure(
    "invalid_api_key",
    "Invalid API Key: incorrect global key",
    "Copy the Global API Key again from My Profile > API Tokens and check the Authentication Email.",
)
INVALID_EMAIL = Failure(
    "invalid_authentication_email",
    "Invalid Authentication Email: wrong account email",
    "Enter the email address of the Cloudflare user that owns the Global API Key.",
)
INVALID_API_TOKEN = Failure(
    "invalid_api_token",
    "Invalid API Token: token expired, revoked, or missing scope",
    "Create or roll the API token in My Profile > API Tokens and paste the new value.",
)
ACCOUNT_NOT_FOUND = Failure(
    "account_not_found", "Account ID not found: wrong account", "Copy the Account ID from the account Overview page."
)
ZONE_NOT_FOUND = Failure(
    "zone_not_found", "Zone ID not found: wrong zone", "Copy the Zone ID from the zone's Overview page."
)
PERMISSION_DENIED = Failure(
    "permission_denied",
    "Permission denied: token lacks required permissions",
    "Edit the API token to add the permissions listed for the skill, for this account and zone.",
)
MISSING_CREDENTIALS = Failure(
    "missing_credentials",
    "Credentials missing",
    "Enter an API Token, or the Authentication Email and Global API Key.",
)
REQUEST_REJECTED = Failure("bad_request", "Request rejected", "Check the skill inputs against the error message.")

_CODE_FAILURES: dict[int, Failure] = {
    1000: INVALID_API_TOKEN,
    6102: INVALID_EMAIL,
    6103: INVALID_API_KEY,
    6111: INVALID_API_TOKEN,
    9103: INVALID_API_KEY,
    9106: MISSING_CREDENTIALS,
    9109: INVALID_API_TOKEN,
    10000: PERMISSION_DENIED,
    971: RATE_LIMITED,
    10100: RATE_LIMITED,
}
_ROUTING_CODES = frozenset({7000, 7003})


def _error_items(body: Any) -> list[Mapping[str, Any]]:
    """Top-level errors followed by their ``error_chain`` entries (the chain names the precise header)."""
    errors = body.get("errors") if isinstance(body, dict) else None
    items: list[Mapping[str, Any]] = []
    for error in errors if isinstance(errors, list) else []:
        if isinstance(error, dict):
            chain = error.get("error_chain")
            if isinstance(chain, list):
                items.extend(e for e in chain if isinstance(e, dict))
            items.append(error)
    return items


def _not_found_for(path: str) -> Failure:
    return ZONE_NOT_FOUND if "/zones/" in path else ACCOUNT_NOT_FOUND


def cloudflare_error(response: httpx.Response, path: str, auth_method: AuthMethod) -> IntegrationError:
    """Classify a failed call from its error codes, falling back to the HTTP status."""
    items = _error_items(json_or_none(response))
    failure: Failure | None = None
    for item in items:
        code = item.get("code")
        if isinstance(code, int) and code in _CODE_FAILURES:
            failure = _CODE_FAILURES[code]
            break
        if code in _ROUTING_CODES:
            failure = _not_found_for(path)
            break
    status = response.status_code
    if failure is None:
        if status == 401:
            failure = INVALID_API_TOKEN if auth_method is AuthMethod.API_TOKEN else INVALID_API_KEY
        elif status == 403:
            failure = PERMISSION_DENIED
        elif status == 404:
            failure = _not_found_for(path)
        else:
            failure = generic_status_failure(status) or REQUEST_REJECTED
    described = "; ".join(f"{item.get('code')} {item.get('message')}" for item in items) or f"HTTP {status}"
    return failure.error(f"Cloudflare API {path} failed: {described}", status)


Envelope = Callable[[Mapping[str, Any]], tuple[list[dict[str, Any]], Mapping[str, Any]]]


def result_array(body: Mapping[str, Any]) -> tuple[list[dict[str, Any]], Mapping[str, Any]]:
    """The usual listing page: a ``result`` array, with ``result_info`` for paging."""
    result = body.get("result")
    info = body.get("result_info")
    items = [item for item in result if isinstance(item, dict)] if isinstance(result, list) else []
    return items, info if isinstance(info, dict) else {}


API_URL = VendorUrl("cloudflare.api_url", "https://api.cloudflare.com")


class CloudflareClient:
    """Calls ``{API_URL}/client/v4`` for one connection with the headers of its auth method."""

    def __init__(self, ctx: SkillContext) -> None:
        self._ctx = ctx
        method = ctx.value("auth_method", AuthMethod.API_TOKEN.value) or AuthMethod.API_TOKEN.value
        try:
            self.auth_method = AuthMethod(method)
        except ValueError:
            raise MISSING_CREDENTIALS.error("Unknown Cloudflare authentication method.") from None
        self.account_id = ctx.require("account_id", "Account ID")
        self.zone_id = ctx.value("zone_id")
        self.base_url = ctx.endpoints.url(API_URL) + "/client/v4"
        self._headers = {"Content-Type": "application/json", **self._auth_headers()}

    def _auth_headers(self) -> dict[str, str]:
        if self.auth_method is AuthMethod.API_TOKEN:
            return {"Authorization": f"Bearer {self._ctx.require('api_token', 'API Token')}"}
        return {
            "X-Auth-Email": self._ctx.require("email", "Authentication Email"),
            "X-Auth-Key": self._ctx.require("global_api_key", "Global API Key"),
        }

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        allow_not_found: bool = False,
    ) -> Mapping[str, Any] | None:
        """The success envelope of one call; None for a 404 when ``allow_not_found`` (existence probes)."""
        response = await self._ctx.http.request(
            method, self.base_url + path, headers=self._headers, params=params, json=json, redactor=self._ctx.redactor
        )
        if allow_not_found and response.status_code == 404:
            return None
        body = json_or_none(response)
        if response.is_success and isinstance(body, dict) and body.get("success") is not False:
            return body
        raise cloudflare_error(response, path, self.auth_method)

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        body = await self.request("GET", path, params=params)
        assert body is not None  # only None when allow_not_found
        return body

    async def paged_list(
        self,
        path: str,
        params: Mapping[str, Any],
        *,
        page: int,
        per_page: int,
        max_pages: int,
        envelope: Envelope = result_array,
    ) -> tuple[list[dict[str, Any]], PageInfo]:
        """A listing paged with ``page``/``per_page``; ``envelope`` reads one page's items and paging info."""

        async def fetch(number: int) -> tuple[list[dict[str, Any]], Mapping[str, Any]]:
            return envelope(await self.get(path, {**params, "page": number, "per_page": per_page}))

        return await collect_pages(fetch, first_page=page, per_page=per_page, max_pages=max_pages)

    def scope_path(self, zone_id: str | None) -> str:
        """``/zones/{id}`` for zone-level calls, else ``/accounts/{account_id}``."""
        return f"/zones/{zone_id}" if zone_id else f"/accounts/{self.account_id}"
