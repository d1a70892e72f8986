"""chat_checkpoints: questions put to people in chat while a playbook waits for the answer

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_checkpoints",
        sa.Column("checkpoint_uuid", sa.Uuid(), nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("connection_uuid", sa.Uuid(), nullable=True),
        sa.Column("connection_name", sa.String(length=200), nullable=False),
        sa.Column("waiting_workflow_id", sa.String(length=200), nullable=False),
        sa.Column("asked_email", sa.String(length=320), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("slack_user_id", sa.String(length=64), nullable=True),
        sa.Column("slack_user_name", sa.String(length=200), nullable=True),
        sa.Column("channel_id", sa.String(length=64), nullable=True),
        sa.Column("message_ts", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("answer", sa.String(length=20), nullable=True),
        sa.Column("answered_by_slack", sa.String(length=200), nullable=True),
        sa.Column("answered_via", sa.String(length=20), nullable=True),
        sa.Column("answered_at", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_uuid"],
            ["alerts.alert_uuid"],
            name=op.f("fk_chat_checkpoints_alert_uuid_alerts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["connection_uuid"],
            ["connections.connection_uuid"],
            name=op.f("fk_chat_checkpoints_connection_uuid_connections"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("checkpoint_uuid", name=op.f("pk_chat_checkpoints")),
        sa.UniqueConstraint("alert_uuid", "attempt", "position", name=op.f("uq_chat_checkpoints_alert_uuid")),
    )
    op.create_index(
        "ix_chat_checkpoints_waiting_user", "chat_checkpoints", ["connection_uuid", "slack_user_id", "status"]
    )


def downgrade() -> None:
    op.drop_index("ix_chat_checkpoints_waiting_user", table_name="chat_checkpoints")
    op.drop_table("chat_checkpoints")
