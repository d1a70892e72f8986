"""The orphan scan sets going again what no workflow would finish by itself: an investigation left mid-run by a
process whose code took other steps (its replay fails with DBOSUnexpectedStepError) gets a fresh attempt, on the
alert's timeline, instead of staying InProgress forever."""

from __future__ import annotations

import time
import uuid

import sqlalchemy as sa
from dbos import DBOS
from sqlalchemy import update

from tests.support.harness import Harness
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.investigations.service import workflow_id_for


def workflow_tables(harness: Harness) -> tuple[sa.Engine, str]:
    """DBOS's own database and the schema prefix of its tables (PostgreSQL: `dbos.`; SQLite: a sibling file)."""
    settings = harness.settings
    return sa.create_engine(settings.workflow_database_url), "" if settings.is_sqlite else "dbos."


def workflow_status(workflow_id: str, timeout: float, wanted: set[str]) -> str:
    deadline = time.monotonic() + timeout
    while True:
        status = DBOS.get_workflow_status(workflow_id)
        if status is not None and status.status in wanted:
            return status.status
        assert time.monotonic() < deadline, f"{workflow_id} is {status.status if status else None}, not {wanted}"
        time.sleep(0.1)


def test_a_workflow_recorded_by_other_steps_gets_a_fresh_attempt(engine_harness: Harness) -> None:
    harness = engine_harness
    assert harness.engine is not None
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    (alert,) = [harness.post_alert(key).json()]
    harness.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] == 15)
    alert_uuid = uuid.UUID(alert["alert_uuid"])
    first = workflow_id_for(alert_uuid, 0)

    # The process that ran it died mid-run, and its code took another step second than this code does.
    engine, schema = workflow_tables(harness)
    with engine.begin() as connection:
        connection.execute(
            sa.text(
                f"UPDATE {schema}operation_outputs SET function_name = 'vigil.retired_step' "
                "WHERE workflow_uuid = :w AND function_id = 1"
            ),
            {"w": first},
        )
        connection.execute(
            sa.text(
                f"UPDATE {schema}workflow_status SET status = 'PENDING', executor_id = 'gone:1' "
                "WHERE workflow_uuid = :w"
            ),
            {"w": first},
        )
    engine.dispose()
    with harness.db.write() as session:
        session.execute(
            update(Alert)
            .where(Alert.alert_uuid == alert_uuid)
            .values(investigation_status=InvestigationStatus.IN_PROGRESS, completed_at=None)
        )

    # First scan: its executor has no heartbeat, so DBOS resumes it here; the replay meets the retired step.
    harness.engine.recover_orphans()
    assert workflow_status(first, 30, {"ERROR", "SUCCESS"}) == "ERROR"
    # Next scan: an attempt whose workflow ended without an outcome gets a fresh one.
    assert harness.engine.recover_orphans() == 1
    (done,) = harness.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] == 15)
    assert done["investigation_retry_count"] == 1
    assert workflow_status(workflow_id_for(alert_uuid, 1), 30, {"SUCCESS"}) == "SUCCESS"
    timeline = harness.client.get(
        f"/serviceapi/alerts/{alert_uuid}", headers={"Authorization": f"Bearer {key}"}
    ).json()["timeline"]
    messages = [event["message"] for event in timeline]
    assert any(
        m.startswith("Failed: Could not resume the investigation: its workflow ended as ERROR") for m in messages
    )
    assert "Fresh attempt: the previous one could not be resumed" in messages
    assert harness.engine.recover_orphans() == 0  # nothing left to do: the scan changes an alert once
