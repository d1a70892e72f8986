"""chat_events and chat_interactions: inbound Slack deliveries recorded once

Revision ID: 0004
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0001"
branch_labels = None
depends_on = "0003"  # the rows reference connections


def _id_column() -> sa.Column[int]:
    return sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False)


def _connection_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["connection_uuid"],
        ["connections.connection_uuid"],
        name=op.f(f"fk_{table}_connection_uuid_connections"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.create_table(
        "chat_events",
        _id_column(),
        sa.Column("connection_uuid", sa.Uuid(), nullable=False),
        sa.Column("event_id", sa.String(length=128), nullable=False),
        sa.Column("event_type", sa.String(length=64), nullable=False),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        _connection_fk("chat_events"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_events")),
        sa.UniqueConstraint("connection_uuid", "event_id", name="uq_chat_events_connection_event"),
    )
    op.create_table(
        "chat_interactions",
        _id_column(),
        sa.Column("connection_uuid", sa.Uuid(), nullable=False),
        sa.Column("interaction_key", sa.String(length=64), nullable=False),
        sa.Column("interaction_type", sa.String(length=64), nullable=False),
        sa.Column("action_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("message_ts", sa.String(length=64), nullable=False),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        _connection_fk("chat_interactions"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_interactions")),
        sa.UniqueConstraint("connection_uuid", "interaction_key", name="uq_chat_interactions_connection_key"),
    )


def downgrade() -> None:
    op.drop_table("chat_interactions")
    op.drop_table("chat_events")
