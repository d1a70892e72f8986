"""The crash window `investigations/flows.py` describes: a state change committed whose enqueue never happened
(the process died in between) is investigated all the same, once the orphan scan finds it."""

from __future__ import annotations

import uuid

from dbos import DBOS

from tests.support.harness import Harness
from vigil.cli import CLI_PRINCIPAL
from vigil.investigations import flows
from vigil.investigations.service import workflow_id_for


def test_a_type_committed_but_never_enqueued_is_investigated_after_the_orphan_scan(engine_harness: Harness) -> None:
    harness = engine_harness
    assert harness.engine is not None
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    body = harness.alert_body()
    del body["alert_type"]
    alert_uuid = uuid.UUID(harness.post_alert(key, body).json()["alert_uuid"])

    # No enqueuer: what a process that died right after the commit leaves behind.
    flows.set_alert_type(harness.db, None, CLI_PRINCIPAL, str(alert_uuid), "WAF rule disabled")
    (alert,) = harness.wait_for(key, lambda a: len(a) == 1)
    assert alert["investigation_status"] == 5  # Submitted, and nothing will run it by itself
    assert DBOS.get_workflow_status(workflow_id_for(alert_uuid, 0)) is None

    assert harness.engine.recover_orphans() == 1
    (done,) = harness.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] == 15)
    assert done["investigation_retry_count"] == 0
