"""a failed step's error code, so skill-call errors can be counted by cause (expired key, missing permission, …)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN (nullable, no default): SQLite and PostgreSQL both do it without rewriting the table.
    op.add_column("investigation_steps", sa.Column("error_code", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("investigation_steps") as batch:
        batch.drop_column("error_code")
