"""Upgrade guard for the one private DBOS name Vigil uses (`investigations/dbos_adapter.py`): a DBOS release that
renames it, reshapes it or changes what it does fails here, not in a dead worker's takeover in production."""

from __future__ import annotations

import importlib.metadata
import inspect
import uuid

import sqlalchemy as sa
from dbos import DBOS

from tests.engine.test_recovery import workflow_status, workflow_tables
from tests.support.harness import Harness
from vigil.investigations import dbos_adapter
from vigil.investigations.service import workflow_id_for


def test_dbos_is_the_release_the_adapter_was_checked_against() -> None:
    installed = importlib.metadata.version("dbos")
    assert installed == dbos_adapter.VERIFIED_DBOS_VERSION, (
        f"DBOS is {installed}, the adapter was checked against {dbos_adapter.VERIFIED_DBOS_VERSION}: re-read "
        "dbos/_recovery.py (does a public call now re-enqueue only what a dead executor still holds?), then bump "
        "VERIFIED_DBOS_VERSION"
    )


def test_the_private_recovery_call_keeps_its_name_and_signature() -> None:
    recover = getattr(DBOS, "_recover_pending_workflows", None)
    assert recover is not None, "DBOS._recover_pending_workflows is gone: see investigations/dbos_adapter.py"
    assert list(inspect.signature(recover).parameters) == ["executor_ids"]


def test_recovery_re_enqueues_only_what_the_dead_executor_still_holds(engine_harness: Harness) -> None:
    harness = engine_harness
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    alert = harness.post_alert(key).json()
    harness.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] == 15)
    workflow_id = workflow_id_for(uuid.UUID(alert["alert_uuid"]), 0)
    engine, schema = workflow_tables(harness)

    def left_pending_by(executor_id: str) -> None:
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    f"UPDATE {schema}workflow_status SET status = 'PENDING', executor_id = :e WHERE workflow_uuid = :w"
                ),
                {"w": workflow_id, "e": executor_id},
            )

    try:
        # Another executor holds it (a live worker dequeued it meanwhile): a late request for the dead one is a no-op.
        left_pending_by("alive:1")
        assert dbos_adapter.recover_pending_workflows("gone:1") == 0
        assert workflow_status(workflow_id, 5, {"PENDING"}) == "PENDING"
        # The dead executor still holds it: it is re-enqueued, a live engine replays it to the end, once.
        left_pending_by("gone:1")
        assert dbos_adapter.recover_pending_workflows("gone:1") == 1
        assert workflow_status(workflow_id, 30, {"SUCCESS"}) == "SUCCESS"
        assert dbos_adapter.recover_pending_workflows("gone:1") == 0
    finally:
        engine.dispose()
