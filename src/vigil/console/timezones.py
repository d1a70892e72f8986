"""The browser's time zone, which the Alerts filters read custom ranges in: a name from the URL, so untrusted."""

from __future__ import annotations

from functools import cache
from zoneinfo import ZoneInfo, available_timezones


@cache
def _known_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def browser_zone(name: str) -> ZoneInfo | None:
    """The IANA zone called `name`, or None for anything else.

    Checked against the list of zones rather than handed to ZoneInfo, which turns a name into a file path and
    raises OSError for a directory ("America") or an over-long name: a 500 for a typo in a URL.
    """
    return ZoneInfo(name) if name in _known_zones() else None
