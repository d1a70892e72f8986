"""The one place Vigil touches a name DBOS does not export; everything else uses its public API.

DBOS has no public call that re-enqueues a dead executor's PENDING workflows *only while that executor still
holds them*. The public `DBOS.resume_workflows` re-enqueues whatever has not finished, so two engines acting on the
same dead executor (two orphan scans, or a scan racing a takeover) would re-enqueue a workflow a live worker has
already dequeued, and it would run twice at once. `DBOS._recover_pending_workflows` matches on the executor id in
the same UPDATE, so once a live worker has dequeued a workflow a second request changes nothing: that is the
claim the heartbeat's takeover and the orphan scan rely on.

`tests/engine/test_dbos_adapter.py` fails when DBOS is upgraded (its version, this name, its signature, its
behaviour): re-read `dbos/_recovery.py` then, and move to a public call if one has appeared.
"""

from __future__ import annotations

from dbos import DBOS

#: The DBOS release this module was checked against (pyproject pins it too).
VERIFIED_DBOS_VERSION = "3.4.0"


def recover_pending_workflows(executor_id: str) -> int:
    """Re-enqueue the PENDING workflows of this application version that `executor_id` still holds, for whichever
    live engine dequeues them; returns how many."""
    return len(DBOS._recover_pending_workflows([executor_id]))
