"""Values vendor query strings share: a moment as UTC ISO 8601, and a filter set without its empty entries."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any


def utc_timestamp(moment: datetime) -> str:
    """``2024-05-01T12:00:00Z``: the moment in UTC to the second (a naive datetime is taken as UTC)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def given(filters: Mapping[str, Any]) -> dict[str, Any]:
    """The filters a caller set: empty ones (None, "", False) are left out of the query."""
    return {name: value for name, value in filters.items() if value}
