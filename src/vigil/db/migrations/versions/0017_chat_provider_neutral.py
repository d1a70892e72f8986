"""chat checkpoints store provider-neutral fields: which chat integration asked, the recipient, the conversation,
an opaque message reference and the posting time, instead of Slack's user id, channel and message ts

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

# Every checkpoint before this revision was asked in Slack (the only chat integration there was).
_SLACK = "slack"


def upgrade() -> None:
    # Indexes over renamed columns are dropped first and made again after: SQLite's batch copy would otherwise
    # rebuild them over the old names.
    op.drop_index("ix_chat_checkpoints_waiting_user", table_name="chat_checkpoints")
    op.drop_index("ix_chat_early_answers_reply", table_name="chat_early_answers")
    with op.batch_alter_table("chat_checkpoints") as batch:
        batch.alter_column(
            "slack_user_id", new_column_name="recipient_id", existing_type=sa.String(64), type_=sa.String(255)
        )
        batch.alter_column("slack_user_name", new_column_name="recipient_name", existing_type=sa.String(200))
        batch.alter_column(
            "channel_id", new_column_name="conversation_id", existing_type=sa.String(64), type_=sa.String(255)
        )
        batch.alter_column("message_ts", new_column_name="posted_at", existing_type=sa.String(64))
        batch.alter_column("answered_by_slack", new_column_name="answered_by_account", existing_type=sa.String(200))
        batch.add_column(sa.Column("provider_id", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("message_ref", sa.Text(), nullable=True))
    _fill_provider_and_message_ref()
    with op.batch_alter_table("chat_checkpoints") as batch:
        batch.alter_column("provider_id", existing_type=sa.String(64), nullable=False)
    with op.batch_alter_table("chat_early_answers") as batch:
        batch.alter_column("user_id", existing_type=sa.String(64), type_=sa.String(255), existing_nullable=False)
        batch.alter_column(
            "channel_id",
            new_column_name="conversation_id",
            existing_type=sa.String(64),
            type_=sa.String(255),
            existing_nullable=False,
        )
        batch.alter_column("reply_ts", new_column_name="posted_at", existing_type=sa.String(64))
    op.create_index(
        "ix_chat_checkpoints_waiting_user", "chat_checkpoints", ["connection_uuid", "recipient_id", "status"]
    )
    op.create_index(
        "ix_chat_early_answers_reply", "chat_early_answers", ["connection_uuid", "user_id", "conversation_id"]
    )


def _fill_provider_and_message_ref() -> None:
    """Slack's message reference is its channel and ts, the two values chat.update needs."""
    checkpoints = sa.table(
        "chat_checkpoints",
        sa.column("checkpoint_uuid", sa.Uuid()),
        sa.column("conversation_id", sa.String()),
        sa.column("posted_at", sa.String()),
        sa.column("provider_id", sa.String()),
        sa.column("message_ref", sa.Text()),
    )
    bind = op.get_bind()
    bind.execute(sa.update(checkpoints).values(provider_id=_SLACK))
    asked = bind.execute(
        sa.select(checkpoints.c.checkpoint_uuid, checkpoints.c.conversation_id, checkpoints.c.posted_at).where(
            checkpoints.c.conversation_id.is_not(None), checkpoints.c.posted_at.is_not(None)
        )
    ).all()
    for checkpoint_uuid, channel, ts in asked:
        bind.execute(
            sa.update(checkpoints)
            .where(checkpoints.c.checkpoint_uuid == checkpoint_uuid)
            .values(message_ref=json.dumps({"channel": channel, "ts": ts}, sort_keys=True))
        )


def downgrade() -> None:
    # Checkpoints asked through another chat integration keep their recipient and conversation under Slack's
    # names; their message reference (which only that integration can read) is dropped.
    op.drop_index("ix_chat_early_answers_reply", table_name="chat_early_answers")
    op.drop_index("ix_chat_checkpoints_waiting_user", table_name="chat_checkpoints")
    with op.batch_alter_table("chat_early_answers") as batch:
        batch.alter_column("posted_at", new_column_name="reply_ts", existing_type=sa.String(64))
        batch.alter_column(
            "conversation_id",
            new_column_name="channel_id",
            existing_type=sa.String(255),
            type_=sa.String(64),
            existing_nullable=False,
        )
        batch.alter_column("user_id", existing_type=sa.String(255), type_=sa.String(64), existing_nullable=False)
    with op.batch_alter_table("chat_checkpoints") as batch:
        batch.drop_column("message_ref")
        batch.drop_column("provider_id")
        batch.alter_column("answered_by_account", new_column_name="answered_by_slack", existing_type=sa.String(200))
        batch.alter_column("posted_at", new_column_name="message_ts", existing_type=sa.String(64))
        batch.alter_column(
            "conversation_id", new_column_name="channel_id", existing_type=sa.String(255), type_=sa.String(64)
        )
        batch.alter_column("recipient_name", new_column_name="slack_user_name", existing_type=sa.String(200))
        batch.alter_column(
            "recipient_id", new_column_name="slack_user_id", existing_type=sa.String(255), type_=sa.String(64)
        )
    op.create_index("ix_chat_early_answers_reply", "chat_early_answers", ["connection_uuid", "user_id", "channel_id"])
    op.create_index(
        "ix_chat_checkpoints_waiting_user", "chat_checkpoints", ["connection_uuid", "slack_user_id", "status"]
    )
