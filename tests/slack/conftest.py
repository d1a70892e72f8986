"""Slack inbound tests: a Slack connection of org ACME, a sender that plays Slack, and row counters."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import slack_fake, slack_server, vendor_urls
from tests.fakes.webhook_chat import WebhookChatFake
from tests.slack.checkpointing import Checkpointed, SlackSide, WebhookChatSide, running
from tests.support import webhook_chat
from tests.support.harness import Harness
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack import inbound
from vigil.integrations.slack.fake import SlackFake
from vigil.integrations.slack.fake_sender import SlackSender
from vigil.integrations.slack.inbound import InboundEvent, InboundInteraction
from vigil.integrations.slack.models import ChatEvent, ChatInteraction

SLACK_FIELDS = {
    "webhook_url": "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "channel": "#soc-alerts",
    "bot_token": slack.BOT_TOKEN,
    "signing_secret": slack.SIGNING_SECRET,
}


@dataclass
class SlackSetup:
    harness: Harness
    key: str
    connection: dict[str, Any]
    sender: SlackSender

    @property
    def token(self) -> str:
        token: str = self.connection["webhook_token"]
        return token

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def rows(self) -> tuple[int, int]:
        """(chat_events, chat_interactions) row counts."""
        with self.harness.db.read() as session:
            events = session.scalar(select(func.count()).select_from(ChatEvent)) or 0
            interactions = session.scalar(select(func.count()).select_from(ChatInteraction)) or 0
            return events, interactions


def create_connection(harness: Harness, key: str, name: str = "slack main", **fields: str) -> dict[str, Any]:
    response = harness.client.post(
        "/serviceapi/connections",
        json={"organization_code": "ACME", "integration_id": "slack", "name": name, "fields": SLACK_FIELDS | fields},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


@pytest.fixture
def chat(harness: Harness) -> SlackSetup:
    harness.add_org("ACME")
    key = harness.add_key().api_key
    return SlackSetup(harness, key, create_connection(harness, key), SlackSender(harness.client))


@dataclass
class Seen:
    events: list[InboundEvent] = field(default_factory=list)
    interactions: list[InboundInteraction] = field(default_factory=list)


@pytest.fixture
def seen() -> Iterator[Seen]:
    """Records what reaches the hook registry (as the checkpoint code will consume it)."""
    record = Seen()

    def on_event(_session: Session, event: InboundEvent) -> None:
        record.events.append(event)

    def on_interaction(_session: Session, interaction: InboundInteraction) -> None:
        record.interactions.append(interaction)

    inbound.register_event_handler("message.im", on_event)
    inbound.register_interaction_handler("block_actions", on_interaction)
    yield record
    inbound.unregister_event_handler("message.im", on_event)
    inbound.unregister_interaction_handler("block_actions", on_interaction)


@pytest.fixture(scope="session")
def webhook_chat_server() -> Iterator[WebhookChatFake]:
    fake = WebhookChatFake()
    with fake.serve():
        yield fake


@pytest.fixture
def slack_engine(db_url: str, tmp_path: Path, slack_fake: SlackFake) -> Iterator[Checkpointed]:
    """The engine asking in the Slack fake, with ACME's Slack connection created and authenticated."""
    settings = engine_settings(db_url, tmp_path, vendor_urls=vendor_urls(slack=slack_fake.api_url))
    with running(settings, SlackSide(slack_fake)) as started:
        yield started


@pytest.fixture(params=["slack", "webhook_chat"])
def chat_engine(
    request: pytest.FixtureRequest, db_url: str, tmp_path: Path, slack_fake: SlackFake
) -> Iterator[Checkpointed]:
    """The engine asking through each chat provider in turn: Slack, then the tests' Webhook Chat (the same
    checkpoint tests prove the engine needs only the `ChatProvider` capability)."""
    if request.param == "slack":
        yield request.getfixturevalue("slack_engine")
        return
    fake: WebhookChatFake = request.getfixturevalue("webhook_chat_server")
    fake.reset()
    with webhook_chat.installed(), running(engine_settings(db_url, tmp_path), WebhookChatSide(fake)) as started:
        yield started


__all__ = ["slack_fake", "slack_server"]
