"""alerts: (organization_uuid, id) index for tenant-scoped, newest-first pages

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21

The console and the API scope every alert list by organization_uuid (the signed-in user's or key's
organizations, or the organization filter) and page newest first on id. Without this index an
organization with few alerts among many is found by walking the whole primary key backwards.
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.create_index("ix_alerts_org_uuid_id", ["organization_uuid", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_index("ix_alerts_org_uuid_id")
