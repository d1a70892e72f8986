"""one head: join the investigations (0002), connections (0003) and chat/console (0004..0009) branches

Revision ID: 0010
Revises: 0002, 0003, 0009
Create Date: 2026-11-21
"""

from __future__ import annotations

revision = "0010"
down_revision = ("0002", "0003", "0009")
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing to change: this revision only gives `alembic upgrade head` a single target."""


def downgrade() -> None:
    """Nothing to undo."""
