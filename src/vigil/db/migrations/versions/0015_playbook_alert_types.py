"""alert types mapped to another type's playbook, so similar types of one provider share a playbook

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "playbook_alert_types",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("alert_provider", sa.String(length=64), nullable=False),
        sa.Column("alert_type", sa.String(length=256), nullable=False),
        sa.Column("playbook_uuid", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_playbook_alert_types_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["playbook_uuid"],
            ["playbooks.playbook_uuid"],
            name=op.f("fk_playbook_alert_types_playbook_uuid_playbooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_playbook_alert_types")),
        sa.UniqueConstraint(
            "organization_uuid", "alert_provider", "alert_type", name=op.f("uq_playbook_alert_types_organization_uuid")
        ),
    )
    with op.batch_alter_table("playbook_alert_types", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_playbook_alert_types_playbook_uuid"), ["playbook_uuid"], unique=False)


def downgrade() -> None:
    op.drop_table("playbook_alert_types")
