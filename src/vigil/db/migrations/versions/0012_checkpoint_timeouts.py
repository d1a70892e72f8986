"""checkpoint timeouts (service-wide setting, organization override, the value a checkpoint used) and answers
that arrive while the question is still being sent

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "service_settings",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.Column("modified_by", sa.String(length=320), nullable=True),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_service_settings")),
    )
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("checkpoint_timeout_seconds", sa.Integer(), nullable=True))
    with op.batch_alter_table("chat_checkpoints", schema=None) as batch_op:
        batch_op.add_column(sa.Column("timeout_seconds", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("timeout_source", sa.String(length=20), nullable=True))
    op.create_table(
        "chat_early_answers",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("connection_uuid", sa.Uuid(), nullable=False),
        sa.Column("checkpoint_uuid", sa.Uuid(), nullable=True),
        sa.Column("answered_via", sa.String(length=20), nullable=False),
        sa.Column("answer", sa.String(length=20), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("user_label", sa.String(length=200), nullable=False),
        sa.Column("channel_id", sa.String(length=64), nullable=False),
        sa.Column("reply_ts", sa.String(length=64), nullable=True),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["checkpoint_uuid"],
            ["chat_checkpoints.checkpoint_uuid"],
            name=op.f("fk_chat_early_answers_checkpoint_uuid_chat_checkpoints"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["connection_uuid"],
            ["connections.connection_uuid"],
            name=op.f("fk_chat_early_answers_connection_uuid_connections"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_early_answers")),
    )
    op.create_index("ix_chat_early_answers_checkpoint_uuid", "chat_early_answers", ["checkpoint_uuid"])
    op.create_index("ix_chat_early_answers_reply", "chat_early_answers", ["connection_uuid", "user_id", "channel_id"])


def downgrade() -> None:
    op.drop_index("ix_chat_early_answers_reply", table_name="chat_early_answers")
    op.drop_index("ix_chat_early_answers_checkpoint_uuid", table_name="chat_early_answers")
    op.drop_table("chat_early_answers")
    with op.batch_alter_table("chat_checkpoints", schema=None) as batch_op:
        batch_op.drop_column("timeout_source")
        batch_op.drop_column("timeout_seconds")
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("checkpoint_timeout_seconds")
    op.drop_table("service_settings")
