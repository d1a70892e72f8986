"""connections: integration instances per organization, secrets encrypted at rest

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "connections",
        sa.Column("connection_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("integration_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("auth_method", sa.String(length=64), nullable=True),
        sa.Column("plain_values", sa.Text(), nullable=False),
        sa.Column("secret_values", sa.Text(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("webhook_token", sa.String(length=64), nullable=False),
        sa.Column("last_test_ok", sa.Boolean(), nullable=True),
        sa.Column("last_test_at", sa.BigInteger(), nullable=True),
        sa.Column("last_test_status_code", sa.Integer(), nullable=True),
        sa.Column("last_test_cause", sa.Text(), nullable=True),
        sa.Column("last_test_remedy", sa.Text(), nullable=True),
        sa.Column("last_test_detail", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_connections_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("connection_uuid", name=op.f("pk_connections")),
        sa.UniqueConstraint("organization_uuid", "name", name="uq_connections_organization_uuid_name"),
        sa.UniqueConstraint("webhook_token", name=op.f("uq_connections_webhook_token")),
    )
    op.create_index("ix_connections_org_integration", "connections", ["organization_uuid", "integration_id"])


def downgrade() -> None:
    op.drop_index("ix_connections_org_integration", table_name="connections")
    op.drop_table("connections")
