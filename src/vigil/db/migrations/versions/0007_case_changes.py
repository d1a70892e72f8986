"""case changes by analysts: structured from/to on case events, idempotent comments, case list indexes

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = "0002"  # the cases, case_events and case_comments tables


def upgrade() -> None:
    with op.batch_alter_table("case_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("field", sa.String(length=40), nullable=True))
        batch_op.add_column(sa.Column("from_value", sa.String(length=320), nullable=True))
        batch_op.add_column(sa.Column("to_value", sa.String(length=320), nullable=True))
    with op.batch_alter_table("case_comments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("submission_id", sa.String(length=128), nullable=True))
        batch_op.create_unique_constraint("uq_case_comments_case_submission", ["case_uuid", "submission_id"])
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.create_index("ix_cases_org_id", ["organization_uuid", "id"], unique=False)
        batch_op.create_index("ix_cases_status_id", ["status", "id"], unique=False)
        batch_op.create_index("ix_cases_assignee_id", ["assignee", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.drop_index("ix_cases_assignee_id")
        batch_op.drop_index("ix_cases_status_id")
        batch_op.drop_index("ix_cases_org_id")
    with op.batch_alter_table("case_comments", schema=None) as batch_op:
        batch_op.drop_constraint("uq_case_comments_case_submission", type_="unique")
        batch_op.drop_column("submission_id")
    with op.batch_alter_table("case_events", schema=None) as batch_op:
        batch_op.drop_column("to_value")
        batch_op.drop_column("from_value")
        batch_op.drop_column("field")
