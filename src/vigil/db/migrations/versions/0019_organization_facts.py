"""organization_facts: what an organization vouches for (scanners, VPN egress, approved tools, change windows,
VIP and service accounts), with owner, reason, scope and expiry; organization_fact_events: who changed them

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "organization_facts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("fact_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("value", sa.String(length=320), nullable=False),
        sa.Column("scope", sa.String(length=500), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("owner", sa.String(length=320), nullable=False),
        sa.Column("created_by", sa.String(length=320), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("window_start", sa.BigInteger(), nullable=True),
        sa.Column("window_end", sa.BigInteger(), nullable=True),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_organization_facts_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_organization_facts")),
        sa.UniqueConstraint("fact_uuid", name=op.f("uq_organization_facts_fact_uuid")),
    )
    op.create_index(
        "ix_organization_facts_org_expires", "organization_facts", ["organization_uuid", "expires_at"], unique=False
    )
    op.create_table(
        "organization_fact_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("fact_uuid", sa.Uuid(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=320), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("field", sa.String(length=40), nullable=True),
        sa.Column("from_value", sa.Text(), nullable=True),
        sa.Column("to_value", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["fact_uuid"],
            ["organization_facts.fact_uuid"],
            name=op.f("fk_organization_fact_events_fact_uuid_organization_facts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_organization_fact_events")),
    )
    op.create_index(
        op.f("ix_organization_fact_events_fact_uuid"), "organization_fact_events", ["fact_uuid"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_organization_fact_events_fact_uuid"), table_name="organization_fact_events")
    op.drop_table("organization_fact_events")
    op.drop_index("ix_organization_facts_org_expires", table_name="organization_facts")
    op.drop_table("organization_facts")
