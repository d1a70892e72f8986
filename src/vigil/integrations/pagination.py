"""Pagination shared by vendor clients: OData ``@odata.nextLink`` and page/per_page with ``result_info``, so
skills never hand-roll page loops."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, Field

from vigil.integrations.errors import IntegrationError

T = TypeVar("T")

JsonObject = dict[str, Any]
ODataFetch = Callable[[str, Mapping[str, str] | None], Awaitable[Mapping[str, Any]]]
PageFetch = Callable[[int], Awaitable[tuple[list[T], Mapping[str, Any]]]]


class PageInfo(BaseModel):
    """Where a page-numbered listing stopped, so a playbook can ask for the next page."""

    page: int = Field(description="Last page number fetched (1-based).")
    per_page: int = Field(description="Page size requested.")
    count: int = Field(description="Number of items returned across the fetched pages.")
    total_count: int | None = Field(default=None, description="Total items the vendor reports, when it does.")
    total_pages: int | None = Field(default=None, description="Total pages the vendor reports or implies.")
    next_page: int | None = Field(default=None, description="Page number to request next; null when done.")


def _has_more(info: Mapping[str, Any], page: int, per_page: int, returned: int) -> tuple[bool, int | None]:
    total_count = info.get("total_count")
    total_pages = info.get("total_pages")
    if not isinstance(total_pages, int) and isinstance(total_count, int) and per_page > 0:
        total_pages = -(-total_count // per_page)
    if returned == 0:
        return False, total_pages if isinstance(total_pages, int) else None
    if isinstance(total_pages, int):
        return page < total_pages, total_pages
    return returned >= per_page, None


async def collect_pages(
    fetch_page: PageFetch[T], *, first_page: int, per_page: int, max_pages: int
) -> tuple[list[T], PageInfo]:
    """Fetch up to ``max_pages`` pages from ``first_page``; stop at an empty page or the reported last page."""
    items: list[T] = []
    page = first_page
    total_count: int | None = None
    total_pages: int | None = None
    more = False
    for fetched in range(max_pages):
        page = first_page + fetched
        page_items, info = await fetch_page(page)
        items.extend(page_items)
        raw_total = info.get("total_count")
        total_count = raw_total if isinstance(raw_total, int) else total_count
        more, total_pages = _has_more(info, page, per_page, len(page_items))
        if not more:
            break
    return items, PageInfo(
        page=page,
        per_page=per_page,
        count=len(items),
        total_count=total_count,
        total_pages=total_pages,
        next_page=page + 1 if more else None,
    )


async def follow_odata_next_links(
    fetch: ODataFetch, url: str, params: Mapping[str, str] | None, *, max_items: int
) -> list[JsonObject]:
    """Collect ``value`` items, following ``@odata.nextLink`` until ``max_items`` or the last page.

    A next link is only followed on the same origin as the first request, so a bearer token never leaves it.
    """
    origin = httpx.URL(url)
    items: list[JsonObject] = []
    next_url: str | None = url
    next_params = params
    followed: set[str] = set()
    while next_url is not None and len(items) < max_items:
        body = await fetch(next_url, next_params)
        value = body.get("value")
        if not isinstance(value, list):
            raise IntegrationError(
                "unexpected_response", "The vendor returned a list response without a 'value' array.", transient=False
            )
        before = len(items)
        items.extend(item for item in value if isinstance(item, dict))
        link = body.get("@odata.nextLink")
        next_url, next_params = None, None
        # An empty page or a repeated link would otherwise loop for ever on a misbehaving server.
        if isinstance(link, str) and link and len(items) > before and link not in followed:
            followed.add(link)
            candidate = httpx.URL(link)
            if (candidate.scheme, candidate.host, candidate.port) != (origin.scheme, origin.host, origin.port):
                raise IntegrationError(
                    "unexpected_response",
                    f"Refusing to follow a next link to another host ({candidate.host}).",
                )
            next_url = link
    return items[:max_items]
