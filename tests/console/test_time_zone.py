"""The Alerts page's custom range is read in the browser's time zone; any other name falls back to UTC, never a 500."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests.support.harness import Harness
from vigil.users import service as users_service
from vigil.users.schemas import Role

PASSWORD = "correct horse battery staple"
#: A directory of the zone database, an over-long name, a data file, a path, junk. (A NUL, in this or any console
#: parameter, is refused with a 422 before any page reads it: tests/console/test_hostile_input.py.)
NOT_ZONES = ["America", "x" * 300, "zone.tab", "../../etc/passwd", "Mars/Olympus"]


@pytest.fixture
def signed_in(harness: Harness) -> Harness:
    with harness.db.write() as session:
        users_service.create_user(session, email="tz@vigil.test", password=PASSWORD, role=Role.ADMIN)
    form = harness.client.get("/login").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token
    signed = harness.client.post(
        "/login", data={"email": "tz@vigil.test", "password": PASSWORD, "csrf_token": token.group(1)}
    )
    assert signed.status_code == 200 and "/alerts" in str(signed.url)
    return harness


def alert_rows(harness: Harness, tz: str, after: str, before: str) -> tuple[int, int, str]:
    response = harness.client.get("/alerts", params={"range": "custom", "tz": tz, "after": after, "before": before})
    return response.status_code, response.text.count('data-alert-id="'), response.text


def test_custom_range_in_the_browsers_zone_and_unknown_zones_fall_back_to_utc(signed_in: Harness) -> None:
    harness = signed_in
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    created = harness.post_alert(key, harness.alert_body()).json()
    at = created["created_at"]

    def window(zone: str) -> tuple[str, str]:
        local = datetime.fromtimestamp(at, tz=ZoneInfo(zone)).replace(tzinfo=None)
        return (local - timedelta(minutes=5)).isoformat(), (local + timedelta(minutes=5)).isoformat()

    # Tokyo's wall clock is 9 hours from UTC's: the window matches only when read in Tokyo.
    assert alert_rows(harness, "Asia/Tokyo", *window("Asia/Tokyo"))[:2] == (200, 1)
    assert alert_rows(harness, "UTC", *window("Asia/Tokyo"))[:2] == (200, 0)
    assert alert_rows(harness, "Asia/Calcutta", *window("Asia/Kolkata"))[:2] == (200, 1)  # an old alias
    for name in NOT_ZONES:
        status, rows, page = alert_rows(harness, name, *window("UTC"))
        assert status == 200, (name, status)
        assert rows == 1, name  # read as UTC, which the page says
        assert "read in the time zone UTC" in page
    status, _, page = alert_rows(harness, "Europe/\x00Berlin", *window("UTC"))
    assert status == 422 and '"field":"query.tz"' in page, page
