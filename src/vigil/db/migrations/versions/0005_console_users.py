"""console_users, console_user_organizations, console_sessions: who may sign in to the console

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "console_users",
        sa.Column("user_uuid", sa.Uuid(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.Column("last_login_at", sa.BigInteger(), nullable=True),
        sa.Column("disabled_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("user_uuid", name=op.f("pk_console_users")),
        sa.UniqueConstraint("email", name=op.f("uq_console_users_email")),
    )
    op.create_table(
        "console_user_organizations",
        sa.Column("user_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_uuid"],
            ["console_users.user_uuid"],
            name=op.f("fk_console_user_organizations_user_uuid_console_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_console_user_organizations_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_uuid", "organization_uuid", name=op.f("pk_console_user_organizations")),
    )
    op.create_table(
        "console_sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_uuid", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_uuid"],
            ["console_users.user_uuid"],
            name=op.f("fk_console_sessions_user_uuid_console_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_console_sessions")),
    )
    op.create_index(op.f("ix_console_sessions_user_uuid"), "console_sessions", ["user_uuid"])


def downgrade() -> None:
    op.drop_index(op.f("ix_console_sessions_user_uuid"), table_name="console_sessions")
    op.drop_table("console_sessions")
    op.drop_table("console_user_organizations")
    op.drop_table("console_users")
