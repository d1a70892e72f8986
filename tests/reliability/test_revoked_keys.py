"""Revoked and expired API keys are refused at once (issue 14 item 8), even right after the key was used.

E1 and batch recognise a key from a per-process memo (`vigil.auth.known_keys`, 10 s) and check it again in the
transaction that stores the alerts; the GET endpoints check it on every request. So the first request after a
revoke (by the CLI, which is another database session as another process would be, or by the console's admin
page) or after the expiry instant must be refused, and nothing sent after it may be stored.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sqlalchemy import func, select, update
from typer.testing import CliRunner

from tests.reliability.record import record
from tests.support.harness import Harness
from tests.support.signin import sign_in
from vigil.alerts.models import Alert
from vigil.auth.models import ApiKey
from vigil.cli import app as cli_app
from vigil.db.base import epoch_now
from vigil.users import service as users_service
from vigil.users.schemas import Role

ADMIN_EMAIL = "keys-admin@vigil.test"
PASSWORD = "correct horse battery staple"
#: Requests sent with the key after it stopped being valid, per endpoint.
AFTER = 5


@dataclass
class Probe:
    """The key's requests to every endpoint that takes it; each returns the HTTP status."""

    harness: Harness
    key: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def e1(self) -> int:
        status: int = self.harness.post_alert(self.key).status_code
        return status

    def batch(self) -> int:
        body = {"alerts": [self.harness.alert_body(), self.harness.alert_body()]}
        response = self.harness.client.post("/serviceapi/alerts/batch", json=body, headers=self.auth)
        status: int = response.status_code
        return status

    def get_alerts(self) -> int:
        status: int = self.harness.client.get("/serviceapi/alerts", headers=self.auth).status_code
        return status

    def get_cases(self) -> int:
        status: int = self.harness.client.get("/serviceapi/cases", headers=self.auth).status_code
        return status

    def endpoints(self) -> dict[str, Callable[[], int]]:
        return {"E1": self.e1, "batch": self.batch, "GET alerts": self.get_alerts, "GET cases": self.get_cases}


def stored_alerts(harness: Harness) -> int:
    with harness.db.read() as session:
        return session.scalar(select(func.count()).select_from(Alert)) or 0


def revoke_by_cli(harness: Harness, key_uuid: uuid.UUID, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIGIL_DATABASE_URL", harness.settings.resolved_database_url)
    monkeypatch.setenv("VIGIL_DATA_DIR", str(harness.settings.data_dir))
    result = CliRunner().invoke(cli_app, ["apikey", "revoke", str(key_uuid)])
    assert result.exit_code == 0 and "Revoked" in result.output, result.output


def revoke_in_console(harness: Harness, key_uuid: uuid.UUID) -> None:
    """An admin signs in and confirms the revoke on the API keys page, as in the browser (form posts + CSRF)."""
    client = harness.client
    csrf = sign_in(harness, ADMIN_EMAIL, role=None)  # the test created the admin
    path = f"/api-keys/{key_uuid}/revoke"
    revoked = client.post(path, data={"csrf_token": csrf(path)}, follow_redirects=False)
    assert revoked.status_code == 303, revoked.text
    client.cookies.clear()


@pytest.mark.parametrize("how", ["CLI", "console", "expiry"])
def test_a_key_is_refused_at_once_after_revoke_or_expiry(
    harness: Harness, backend: str, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    harness.add_org("ACME")
    with harness.db.write() as session:
        users_service.create_user(session, email=ADMIN_EMAIL, password=PASSWORD, role=Role.ADMIN)
    created = harness.add_key("ACME", expires_in_days=1 if how == "expiry" else None)
    probe = Probe(harness, created.api_key)
    expires_at = 0
    if how == "expiry":
        # Keys expire on whole seconds; give this one two seconds of life from now.
        expires_at = epoch_now() + 2
        with harness.db.write() as session:
            session.execute(update(ApiKey).where(ApiKey.key_uuid == created.key_uuid).values(expires_at=expires_at))

    # The key is used on every endpoint just before it stops working, so the intake memo holds it.
    before = {name: call() for name, call in probe.endpoints().items()}
    assert before == {"E1": 201, "batch": 200, "GET alerts": 200, "GET cases": 200}, before
    stored_before = stored_alerts(harness)

    if how == "CLI":
        revoke_by_cli(harness, created.key_uuid, monkeypatch)
    elif how == "console":
        revoke_in_console(harness, created.key_uuid)
    else:
        while time.time() < expires_at:
            time.sleep(0.005)
    invalid_since = time.monotonic()
    first_refusal = probe.e1()
    refused_after = time.monotonic() - invalid_since
    after = {name: [call() for _ in range(AFTER)] for name, call in probe.endpoints().items()}
    after["E1"].insert(0, first_refusal)
    stored_after = stored_alerts(harness) - stored_before

    sent = sum(len(statuses) for statuses in after.values())
    not_refused = {name: [s for s in statuses if s != 401] for name, statuses in after.items()}
    held = stored_after == 0 and not any(not_refused.values())
    record(
        f"API key refused at once after {'expiry' if how == 'expiry' else f'revoke ({how})'}, memo warm",
        sent,
        "requests",
        held,
        f"first E1 after it refused in {refused_after * 1000:.0f} ms; {sent - sum(map(len, not_refused.values()))} "
        f"of {sent} requests on E1, batch, GET alerts, GET cases got 401; {stored_after} alerts stored after",
        backend=backend,
    )
    assert first_refusal == 401
    assert not any(not_refused.values()), not_refused
    assert stored_after == 0
