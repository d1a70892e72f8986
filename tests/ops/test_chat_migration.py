"""Migration 0017 moves checkpoints asked before it (Slack's user id, DM channel and message ts) into the
provider-neutral columns, and its downgrade puts them back. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from typing import Any

import sqlalchemy as sa
from alembic import command

from tests.support.harness import Harness
from vigil.db.migrate import alembic_config
from vigil.db.session import create_db_engine
from vigil.investigations.models import ChatCheckpoint, ChatEarlyAnswer
from vigil.settings import Settings

CHECKPOINT = uuid.UUID("6f1c1f52-8a51-4c3e-9d0b-6c1f3b1d2e01")
OLD = {
    "slack_user_id": "W012A3CDE",
    "slack_user_name": "Egon Spengler",
    "channel_id": "D069C7QFK",
    "message_ts": "1795291351.974779",
    "answered_by_slack": "spengler (W012A3CDE)",
}


def _migrate(url: str, revision: str, *, down: bool = False) -> None:
    engine = create_db_engine(Settings(database_url=url))
    config = alembic_config(engine)
    try:
        with engine.connect() as connection:
            config.attributes["connection"] = connection
            (command.downgrade if down else command.upgrade)(config, revision)
            connection.commit()
    finally:
        engine.dispose()


def _table(name: str, *columns: tuple[str, Any]) -> sa.TableClause:
    return sa.table(name, *(sa.column(column, kind) for column, kind in columns))


OLD_CHECKPOINTS = _table(
    "chat_checkpoints",
    ("checkpoint_uuid", sa.Uuid()),
    ("alert_uuid", sa.Uuid()),
    ("attempt", sa.Integer()),
    ("position", sa.Integer()),
    ("organization_uuid", sa.Uuid()),
    ("connection_uuid", sa.Uuid()),
    ("connection_name", sa.String()),
    ("waiting_workflow_id", sa.String()),
    ("asked_email", sa.String()),
    ("question", sa.Text()),
    ("status", sa.String()),
    ("answer", sa.String()),
    ("answered_via", sa.String()),
    ("created_at", sa.BigInteger()),
    *((column, sa.String()) for column in OLD),
)
OLD_EARLY = _table(
    "chat_early_answers",
    ("connection_uuid", sa.Uuid()),
    ("answered_via", sa.String()),
    ("answer", sa.String()),
    ("user_id", sa.String()),
    ("user_label", sa.String()),
    ("channel_id", sa.String()),
    ("reply_ts", sa.String()),
    ("received_at", sa.BigInteger()),
)


def test_checkpoints_asked_in_slack_keep_their_data_across_0017_and_back(harness: Harness, db_url: str) -> None:
    harness.add_org("ACME")
    key = harness.add_key().api_key
    auth = {"Authorization": f"Bearer {key}"}
    fields = {"webhook_url": "http://127.0.0.1:9/x", "channel": "#c", "bot_token": "xoxb-1", "signing_secret": "s"}
    created = harness.client.post(
        "/serviceapi/connections",
        json={"organization_code": "ACME", "integration_id": "slack", "name": "slack", "fields": fields},
        headers=auth,
    ).json()
    connection_uuid = uuid.UUID(created["connection_uuid"])
    alert = harness.post_alert(key, harness.alert_body()).json()
    harness.db.dispose()

    _migrate(db_url, "0016", down=True)
    engine = create_db_engine(Settings(database_url=db_url))
    with engine.begin() as connection:
        organization_uuid = connection.execute(sa.text("SELECT organization_uuid FROM organizations")).scalar_one()
        connection.execute(
            sa.insert(OLD_CHECKPOINTS).values(
                checkpoint_uuid=CHECKPOINT,
                alert_uuid=uuid.UUID(alert["alert_uuid"]),
                attempt=1,
                position=0,
                organization_uuid=uuid.UUID(str(organization_uuid)),
                connection_uuid=connection_uuid,
                connection_name="slack",
                waiting_workflow_id="wf:checkpoint-0",
                asked_email="spengler@ghostbusters.example.com",
                question="Was this you?",
                status="answered",
                answer="denied",
                answered_via="button",
                created_at=1795291350,
                **OLD,
            )
        )
        connection.execute(
            sa.insert(OLD_EARLY).values(
                connection_uuid=connection_uuid,
                answered_via="dm",
                answer="confirmed",
                user_id="W012A3CDE",
                user_label="W012A3CDE",
                channel_id="D069C7QFK",
                reply_ts="1795291352.000100",
                received_at=1795291352,
            )
        )
    engine.dispose()

    _migrate(db_url, "heads")
    engine = create_db_engine(Settings(database_url=db_url))
    with engine.connect() as connection:
        row = connection.execute(sa.select(ChatCheckpoint.__table__)).mappings().one()
        early = connection.execute(sa.select(ChatEarlyAnswer.__table__)).mappings().one()
    engine.dispose()
    assert (row["provider_id"], row["recipient_id"], row["recipient_name"]) == ("slack", "W012A3CDE", "Egon Spengler")
    assert (row["conversation_id"], row["posted_at"]) == ("D069C7QFK", "1795291351.974779")
    assert json.loads(row["message_ref"]) == {"channel": "D069C7QFK", "ts": "1795291351.974779"}
    assert row["answered_by_account"] == "spengler (W012A3CDE)"
    assert (early["conversation_id"], early["posted_at"], early["user_id"]) == (
        "D069C7QFK",
        "1795291352.000100",
        "W012A3CDE",
    )

    _migrate(db_url, "0016", down=True)
    engine = create_db_engine(Settings(database_url=db_url))
    with engine.connect() as connection:
        back = connection.execute(sa.select(*(OLD_CHECKPOINTS.c[column] for column in OLD))).mappings().one()
        early_back = connection.execute(sa.select(OLD_EARLY.c.channel_id, OLD_EARLY.c.reply_ts)).one()
    engine.dispose()
    assert dict(back) == OLD
    assert tuple(early_back) == ("D069C7QFK", "1795291352.000100")
    _migrate(db_url, "heads")
