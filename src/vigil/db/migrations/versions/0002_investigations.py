"""investigations, playbooks, cases

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "worker_heartbeats",
        sa.Column("executor_id", sa.String(length=120), nullable=False),
        sa.Column("hostname", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("last_seen", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("executor_id", name=op.f("pk_worker_heartbeats")),
    )
    op.create_table(
        "case_counters",
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("last_value", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_case_counters_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("organization_uuid", name=op.f("pk_case_counters")),
    )
    op.create_table(
        "playbooks",
        sa.Column("playbook_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_code", sa.String(length=16), nullable=False),
        sa.Column("alert_provider", sa.String(length=64), nullable=False),
        sa.Column("alert_type", sa.String(length=256), nullable=False),
        sa.Column("name", sa.String(length=600), nullable=False),
        sa.Column("current_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_playbooks_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("playbook_uuid", name=op.f("pk_playbooks")),
        sa.UniqueConstraint(
            "organization_uuid", "alert_provider", "alert_type", name=op.f("uq_playbooks_organization_uuid")
        ),
    )
    op.create_table(
        "cases",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("case_uuid", sa.Uuid(), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_code", sa.String(length=16), nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("alert_id", sa.String(length=120), nullable=False),
        sa.Column("playbook_uuid", sa.Uuid(), nullable=True),
        sa.Column("playbook_version", sa.BigInteger(), nullable=True),
        sa.Column("attempt", sa.BigInteger(), nullable=False),
        sa.Column("title", sa.String(length=600), nullable=False),
        sa.Column("status", sa.String(length=30), nullable=False),
        sa.Column("severity", sa.String(length=20), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=False),
        sa.Column("disposition", sa.String(length=30), nullable=False),
        sa.Column("ai_disposition", sa.String(length=30), nullable=False),
        sa.Column("ai_confidence", sa.Float(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("findings", sa.Text(), nullable=False),
        sa.Column("recommended_actions", sa.Text(), nullable=False),
        sa.Column("assignee", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.Column("closed_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_uuid"], ["alerts.alert_uuid"], name=op.f("fk_cases_alert_uuid_alerts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_cases_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cases")),
        sa.UniqueConstraint("alert_uuid", name=op.f("uq_cases_alert_uuid")),
        sa.UniqueConstraint("case_id", name=op.f("uq_cases_case_id")),
        sa.UniqueConstraint("case_uuid", name=op.f("uq_cases_case_uuid")),
    )
    op.create_table(
        "investigation_attempts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("workflow_id", sa.String(length=120), nullable=False),
        sa.Column("playbook_uuid", sa.Uuid(), nullable=True),
        sa.Column("playbook_version", sa.Integer(), nullable=True),
        sa.Column("entities", sa.Text(), nullable=False),
        sa.Column("category", sa.String(length=40), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sa.String(length=20), nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_uuid"],
            ["alerts.alert_uuid"],
            name=op.f("fk_investigation_attempts_alert_uuid_alerts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_investigation_attempts")),
        sa.UniqueConstraint("alert_uuid", "attempt", name=op.f("uq_investigation_attempts_alert_uuid")),
    )
    op.create_table(
        "investigation_steps",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("skill_id", sa.String(length=200), nullable=True),
        sa.Column("connection_name", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("inputs", sa.Text(), nullable=False),
        sa.Column("output", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["alert_uuid"],
            ["alerts.alert_uuid"],
            name=op.f("fk_investigation_steps_alert_uuid_alerts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_investigation_steps")),
        sa.UniqueConstraint("alert_uuid", "attempt", "position", name=op.f("uq_investigation_steps_alert_uuid")),
    )
    op.create_table(
        "playbook_versions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("playbook_uuid", sa.Uuid(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("definition", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["playbook_uuid"],
            ["playbooks.playbook_uuid"],
            name=op.f("fk_playbook_versions_playbook_uuid_playbooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_playbook_versions")),
        sa.UniqueConstraint("playbook_uuid", "version", name=op.f("uq_playbook_versions_playbook_uuid")),
    )
    op.create_table(
        "case_comments",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("case_uuid", sa.Uuid(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["case_uuid"], ["cases.case_uuid"], name=op.f("fk_case_comments_case_uuid_cases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_comments")),
    )
    with op.batch_alter_table("case_comments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_case_comments_case_uuid"), ["case_uuid"], unique=False)

    op.create_table(
        "case_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("case_uuid", sa.Uuid(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["case_uuid"], ["cases.case_uuid"], name=op.f("fk_case_events_case_uuid_cases"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_events")),
    )
    with op.batch_alter_table("case_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_case_events_case_uuid"), ["case_uuid"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("case_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_case_events_case_uuid"))

    op.drop_table("case_events")
    with op.batch_alter_table("case_comments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_case_comments_case_uuid"))

    op.drop_table("case_comments")
    op.drop_table("playbook_versions")
    op.drop_table("investigation_steps")
    op.drop_table("investigation_attempts")
    op.drop_table("cases")
    op.drop_table("playbooks")
    op.drop_table("case_counters")
    op.drop_table("worker_heartbeats")
