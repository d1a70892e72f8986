"""A Vigil app on a private database (``vigil.evaluation.harness``) plus helpers to post alerts and wait in a test."""

from __future__ import annotations

import time
from typing import Any

from vigil.evaluation.harness import Harness as EvalHarness


class Harness(EvalHarness):
    """The evaluation's app harness plus the helpers tests post and wait with."""

    @staticmethod
    def alert_body(org: str = "ACME", provider: str = "cloudflare", **overrides: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "organization_code": org,
            "alert_provider": provider,
            "alert_type": "WAF rule disabled",
            "alert_content": '{"actor": {"email": "jane@acme.example", "ip": "203.0.113.7"}}',
        }
        body.update(overrides)
        return body

    def post_alert(self, key: str, body: dict[str, Any] | None = None, **headers: str) -> Any:
        return self.client.post(
            "/serviceapi/alerts",
            json=body if body is not None else self.alert_body(),
            headers={"Cookie": f"Session={key}", **headers},
        )

    def wait_for(self, key: str, predicate: Any, timeout: float = 60.0, **params: Any) -> list[dict[str, Any]]:
        """Poll the alert list until `predicate(alerts)` holds; returns the alerts (fails on timeout)."""
        deadline = time.monotonic() + timeout
        alerts: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            response = self.client.get(
                "/serviceapi/alerts", params={"limit": 200, **params}, headers={"Authorization": f"Bearer {key}"}
            )
            alerts = response.json()["alerts"]
            if predicate(alerts):
                return alerts
            time.sleep(0.2)
        raise AssertionError(f"timed out; last statuses {[a['investigation_status'] for a in alerts]}")
