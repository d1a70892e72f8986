"""LLM investigators: per-organization model override, the model behind each case, and every model request and
tool call of an investigation (the AI audit trail)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ai_model", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("ai_base_url", sa.String(length=500), nullable=True))
        batch_op.add_column(sa.Column("ai_api_key", sa.Text(), nullable=True))
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ai_model", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("ai_fallback_reason", sa.Text(), nullable=True))
    op.create_table(
        "ai_exchanges",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("stage", sa.String(length=20), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("request", sa.Text(), nullable=False),
        sa.Column("response", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("error_kind", sa.String(length=40), nullable=True),
        sa.Column("retries", sa.Text(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["alert_uuid"], ["alerts.alert_uuid"], name=op.f("fk_ai_exchanges_alert_uuid_alerts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ai_exchanges")),
        sa.UniqueConstraint("alert_uuid", "attempt", "stage", "seq", name=op.f("uq_ai_exchanges_alert_uuid")),
    )
    op.create_index("ix_ai_exchanges_organization_uuid", "ai_exchanges", ["organization_uuid"])


def downgrade() -> None:
    op.drop_index("ix_ai_exchanges_organization_uuid", table_name="ai_exchanges")
    op.drop_table("ai_exchanges")
    with op.batch_alter_table("cases", schema=None) as batch_op:
        batch_op.drop_column("ai_fallback_reason")
        batch_op.drop_column("ai_model")
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("ai_api_key")
        batch_op.drop_column("ai_base_url")
        batch_op.drop_column("ai_model")
