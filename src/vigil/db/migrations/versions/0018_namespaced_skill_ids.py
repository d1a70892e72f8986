"""skill ids are namespaced and stable (`microsoft_defender.list_machines`) instead of display names ("List
Machines"): stored playbook steps and the skill ids of recorded investigation steps are rewritten

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

# Every skill id before this revision (its display name) → its id from this revision on. Written out here, not
# read from the catalog: a migration must keep meaning what it meant when it was written.
NAMESPACED = {
    "Look up related alerts": "vigil.related_alerts",
    "Chat Checkpoint": "chat.checkpoint",
    "List Machines": "microsoft_defender.list_machines",
    "Fetch Alerts": "microsoft_defender.fetch_alerts",
    "Run Advanced Hunting Query": "microsoft_defender.run_advanced_hunting_query",
    "Machine Live Response": "microsoft_defender.machine_live_response",
    "Isolate Machine": "microsoft_defender.isolate_machine",
    "Edge Get Account Audit Logs for Detections": "cloudflare.edge_get_account_audit_logs_for_detections",
    "Get Edge Audit Logs": "cloudflare.get_edge_audit_logs",
    "Get Edge Security Center Insights": "cloudflare.get_edge_security_center_insights",
    "List Edge Access Applications": "cloudflare.list_edge_access_applications",
    "Get Edge Zone Details": "cloudflare.get_edge_zone_details",
    "Create Edge Ruleset Rule": "cloudflare.create_edge_ruleset_rule",
    "List Accounts": "push_security.list_accounts",
    "Find Account by Email": "push_security.find_account_by_email",
    "Get Security Findings by Email": "push_security.get_security_findings_by_email",
    "Send Chat Message": "slack.send_chat_message",
}

_VERSIONS = sa.table("playbook_versions", sa.column("id", sa.Integer()), sa.column("definition", sa.Text()))
_STEPS = sa.table("investigation_steps", sa.column("skill_id", sa.String()))
_BATCH = 500


def _rewritten(definition: str, renames: Mapping[str, str]) -> str | None:
    """The definition with its steps' skills renamed, or None when nothing in it changes."""
    body: Any = json.loads(definition)
    steps = body.get("steps") if isinstance(body, dict) else None
    changed = False
    for step in steps if isinstance(steps, list) else ():
        skill = step.get("skill") if isinstance(step, dict) else None
        if isinstance(skill, str) and skill in renames:
            step["skill"] = renames[skill]
            changed = True
    # Compact and unescaped, as pydantic's model_dump_json wrote it.
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False) if changed else None


def _rename(renames: Mapping[str, str]) -> None:
    connection = op.get_bind()
    last_id = 0
    while True:
        rows = connection.execute(
            sa.select(_VERSIONS.c.id, _VERSIONS.c.definition)
            .where(_VERSIONS.c.id > last_id)
            .order_by(_VERSIONS.c.id)
            .limit(_BATCH)
        ).all()
        if not rows:
            break
        for row_id, definition in rows:
            text = _rewritten(definition, renames)
            if text is not None:
                connection.execute(_VERSIONS.update().where(_VERSIONS.c.id == row_id).values(definition=text))
        last_id = rows[-1][0]
    for old, new in renames.items():
        connection.execute(_STEPS.update().where(_STEPS.c.skill_id == old).values(skill_id=new))


def upgrade() -> None:
    _rename(NAMESPACED)


def downgrade() -> None:
    _rename({new: old for old, new in NAMESPACED.items()})
