"""Push Security REST v1 client. Every call goes through one 10 req/s limiter per connection (the API's limit
is per key), and list endpoints page with ``paging.nextToken``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from vigil.integrations.errors import UNEXPECTED_RESPONSE, Failure, IntegrationError, generic_status_failure
from vigil.integrations.framework import SkillContext
from vigil.integrations.http import RateLimit, json_or_none
from vigil.integrations.push_security.fields import DEFAULT_DOMAIN

PUSH_RATE_LIMIT = RateLimit(rate=10.0, burst=5)

KEY_INVALID = Failure(
    "invalid_api_key",
    "Key incorrect or expired",
    "Create a new API key in the Push admin console (Settings > API keys) and update the connection.",
)
PERMISSIONS_INSUFFICIENT = Failure(
    "insufficient_permissions",
    "Permissions insufficient",
    "Use a key whose permission level allows this action (Full access for changes).",
)
BAD_REQUEST = Failure("bad_request", "Incorrect request parameters", "Check the skill inputs.")
NOT_FOUND = Failure("not_found", "Not found", "Check the ID, or the API domain of the connection.")
INVALID_DOMAIN = Failure(
    "invalid_domain", "Invalid API domain", "Edit the connection: enter the API domain as a host name or https:// URL."
)
_STATUS_FAILURES = {400: BAD_REQUEST, 401: KEY_INVALID, 403: PERMISSIONS_INSUFFICIENT, 404: NOT_FOUND}


def base_url(domain: str | None) -> str:
    """``https://<domain>/v1`` for a bare host; a value with a scheme and path is taken as the full base URL."""
    value = (domain or DEFAULT_DOMAIN).strip().rstrip("/")
    if "://" not in value:
        value = f"https://{value}"
    try:
        url = httpx.URL(value)
    except httpx.InvalidURL:
        raise INVALID_DOMAIN.error("The connection's API domain is not a valid host name or URL.") from None
    return value if url.path not in ("", "/") else f"{value}/v1"


def push_error(response: httpx.Response, path: str) -> IntegrationError:
    body = json_or_none(response)
    text = str(body.get("message") or "") if isinstance(body, dict) else ""
    failure = _STATUS_FAILURES.get(response.status_code) or generic_status_failure(response.status_code)
    failure = failure or BAD_REQUEST
    return failure.error(
        f"Push Security API {path} failed (HTTP {response.status_code}{': ' + text if text else ''}).",
        response.status_code,
    )


class PushClient:
    def __init__(self, ctx: SkillContext) -> None:
        self._ctx = ctx
        self.base_url = base_url(ctx.value("domain"))
        self._headers = {"Accept": "application/json", "x-api-key": ctx.require("api_key", "API Key")}
        self._limiter_key = f"push_security:{ctx.connection_key}"

    async def get(self, path: str, params: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        response = await self._ctx.http.request(
            "GET",
            self.base_url + path,
            headers=self._headers,
            params=params,
            rate_limit=PUSH_RATE_LIMIT,
            limiter_key=self._limiter_key,
            redactor=self._ctx.redactor,
        )
        body = json_or_none(response)
        if not response.is_success:
            raise push_error(response, path)
        if not isinstance(body, dict):
            raise UNEXPECTED_RESPONSE.error(f"Push Security API {path} answered without JSON.", response.status_code)
        return body

    async def list(
        self, path: str, params: Mapping[str, Any], *, next_token: str | None, max_pages: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """``result`` items over up to ``max_pages`` pages; returns the token to continue from, if any."""
        items: list[dict[str, Any]] = []
        token = next_token
        for _ in range(max_pages):
            query = {**params, **({"nextToken": token} if token else {})}
            body = await self.get(path, query)
            result = body.get("result")
            if not isinstance(result, list):  # never read a garbled page as "no accounts"
                raise UNEXPECTED_RESPONSE.error(f"Push Security API {path} answered without a result list.")
            items.extend(i for i in result if isinstance(i, dict))
            paging = body.get("paging")
            more = isinstance(paging, dict) and paging.get("moreResults") is True
            token = paging.get("nextToken") if isinstance(paging, dict) and more else None
            token = token if isinstance(token, str) and token else None
            if token is None:
                break
        return items, token
