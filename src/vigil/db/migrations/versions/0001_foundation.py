"""foundation: organizations, providers, api keys, alerts

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import time

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# Frozen copy of the providers seeded on first install; later additions get their own migration.
BUILT_IN_PROVIDERS = (
    ("microsoft_defender", "Microsoft Defender for Endpoint"),
    ("cloudflare", "Cloudflare"),
    ("push_security", "Push Security"),
    ("aws", "AWS (GuardDuty, CloudTrail, Security Hub)"),
    ("okta", "Okta"),
    ("entra_id", "Microsoft Entra ID"),
    ("google_workspace", "Google Workspace"),
    ("crowdstrike", "CrowdStrike Falcon"),
    ("sentinelone", "SentinelOne"),
    ("github", "GitHub"),
    ("custom", "Custom source"),
)


def upgrade() -> None:
    op.create_table(
        "api_keys",
        sa.Column("key_uuid", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("prefix", sa.String(length=32), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("all_organizations", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.Column("last_used_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("key_uuid", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
    )
    op.create_table(
        "organizations",
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_code", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("organization_uuid", name=op.f("pk_organizations")),
        sa.UniqueConstraint("organization_code", name=op.f("uq_organizations_organization_code")),
    )
    op.create_table(
        "providers",
        sa.Column("alert_provider", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("built_in", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("alert_provider", name=op.f("pk_providers")),
    )
    op.create_table(
        "alert_counters",
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("alert_provider", sa.String(length=64), nullable=False),
        sa.Column("last_value", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_alert_counters_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("organization_uuid", "alert_provider", name=op.f("pk_alert_counters")),
    )
    op.create_table(
        "alerts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("alert_id", sa.String(length=120), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_code", sa.String(length=16), nullable=False),
        sa.Column("alert_provider", sa.String(length=64), nullable=False),
        sa.Column("alert_type", sa.String(length=256), nullable=True),
        sa.Column("alert_content", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("created_at_source", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.Uuid(), nullable=False),
        sa.Column("modified_at", sa.BigInteger(), nullable=False),
        sa.Column("investigation_status", sa.Integer(), nullable=False),
        sa.Column("investigation_retry_count", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.String(length=40), nullable=True),
        sa.Column("investigator", sa.String(length=600), nullable=True),
        sa.Column("completed_at", sa.BigInteger(), nullable=True),
        sa.Column("failure_reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_provider"], ["providers.alert_provider"], name=op.f("fk_alerts_alert_provider_providers")
        ),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_alerts_organization_uuid_organizations"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alerts")),
        sa.UniqueConstraint("alert_id", name=op.f("uq_alerts_alert_id")),
        sa.UniqueConstraint("alert_uuid", name=op.f("uq_alerts_alert_uuid")),
    )
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.create_index("ix_alerts_created_at", ["created_at"], unique=False)
        batch_op.create_index("ix_alerts_org_id", ["organization_code", "id"], unique=False)
        batch_op.create_index("ix_alerts_provider_id", ["alert_provider", "id"], unique=False)
        batch_op.create_index("ix_alerts_status_id", ["investigation_status", "id"], unique=False)
        batch_op.create_index("ix_alerts_type_id", ["alert_type", "id"], unique=False)

    op.create_table(
        "api_key_organizations",
        sa.Column("key_uuid", sa.Uuid(), nullable=False),
        sa.Column("organization_uuid", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["key_uuid"],
            ["api_keys.key_uuid"],
            name=op.f("fk_api_key_organizations_key_uuid_api_keys"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_uuid"],
            ["organizations.organization_uuid"],
            name=op.f("fk_api_key_organizations_organization_uuid_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("key_uuid", "organization_uuid", name=op.f("pk_api_key_organizations")),
    )
    op.create_table(
        "alert_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("from_status", sa.Integer(), nullable=True),
        sa.Column("to_status", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["alert_uuid"],
            ["alerts.alert_uuid"],
            name=op.f("fk_alert_events_alert_uuid_alerts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_events")),
    )
    with op.batch_alter_table("alert_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alert_events_alert_uuid"), ["alert_uuid"], unique=False)

    op.create_table(
        "idempotency_records",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("api_key_uuid", sa.Uuid(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=128), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("alert_uuid", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["alert_uuid"],
            ["alerts.alert_uuid"],
            name=op.f("fk_idempotency_records_alert_uuid_alerts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotency_records")),
        sa.UniqueConstraint("api_key_uuid", "idempotency_key", name=op.f("uq_idempotency_records_api_key_uuid")),
    )
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_idempotency_records_created_at"), ["created_at"], unique=False)

    providers = sa.table(
        "providers",
        sa.column("alert_provider", sa.String),
        sa.column("name", sa.String),
        sa.column("enabled", sa.Boolean),
        sa.column("built_in", sa.Boolean),
        sa.column("created_at", sa.BigInteger),
    )
    seeded_at = int(time.time())
    op.bulk_insert(
        providers,
        [
            {"alert_provider": slug, "name": name, "enabled": True, "built_in": True, "created_at": seeded_at}
            for slug, name in BUILT_IN_PROVIDERS
        ],
    )


def downgrade() -> None:
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotency_records_created_at"))

    op.drop_table("idempotency_records")
    with op.batch_alter_table("alert_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alert_events_alert_uuid"))

    op.drop_table("alert_events")
    op.drop_table("api_key_organizations")
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_index("ix_alerts_type_id")
        batch_op.drop_index("ix_alerts_status_id")
        batch_op.drop_index("ix_alerts_provider_id")
        batch_op.drop_index("ix_alerts_org_id")
        batch_op.drop_index("ix_alerts_created_at")

    op.drop_table("alerts")
    op.drop_table("alert_counters")
    op.drop_table("providers")
    op.drop_table("organizations")
    op.drop_table("api_keys")
