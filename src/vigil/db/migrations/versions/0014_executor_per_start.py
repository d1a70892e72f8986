"""Executor identity per process start: a heartbeat row per start, with its stable name and what proves on this
host that its process is gone (kernel boot id + pid namespace, the pid's start time)

Heartbeat rows are transient (rewritten every few seconds by live processes), so the table is recreated rather
than altered: stop every `vigil serve` / `vigil worker` before upgrading, as for any release.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("worker_heartbeats")
    op.create_table(
        "worker_heartbeats",
        sa.Column("executor_id", sa.String(length=140), nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("hostname", sa.String(length=200), nullable=False),
        sa.Column("host_key", sa.String(length=200), nullable=True),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("pid_started", sa.BigInteger(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("last_seen", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("executor_id", name=op.f("pk_worker_heartbeats")),
    )


def downgrade() -> None:
    op.drop_table("worker_heartbeats")
    op.create_table(
        "worker_heartbeats",
        sa.Column("executor_id", sa.String(length=120), nullable=False),
        sa.Column("hostname", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("last_seen", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("executor_id", name=op.f("pk_worker_heartbeats")),
    )
