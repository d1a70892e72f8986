"""Chat Checkpoint test support: an app with its engine, a tested Slack connection of ACME, and helpers that
play the asked person (press a button, reply in the DM) and read what the investigation recorded."""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from tests.fakes import slack
from tests.fakes.fixtures import slack_values
from tests.fakes.slack import SlackFake
from tests.fakes.slack_sender import SlackSender, block_actions, message_im
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.investigations.models import ChatCheckpoint, InvestigationStep
from vigil.playbooks.schemas import PlaybookDefinition
from vigil.settings import Settings

ASKED = "spengler@ghostbusters.example.com"
ASKED_ID = slack.USERS[ASKED]["id"]
SIGN_IN_TYPE = "Suspicious sign-in"


def sign_in_content(n: int = 1) -> str:
    return json.dumps({"userPrincipalName": ASKED, "ipAddress": f"198.51.100.{n}", "result": "success"})


@dataclass
class Checkpointed:
    harness: Harness
    key: str
    fake: SlackFake
    sender: SlackSender
    token: str
    buttons: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)

    def post_sign_in(self, n: int = 1, alert_type: str = SIGN_IN_TYPE) -> dict[str, Any]:
        body = self.harness.alert_body(provider="okta", alert_type=alert_type, alert_content=sign_in_content(n))
        response = self.harness.post_alert(self.key, body)
        assert response.status_code == 201, response.text
        created: dict[str, Any] = response.json()
        return created

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def alert(self, alert_id: str) -> dict[str, Any]:
        response = self.harness.client.get(
            f"/serviceapi/alerts/{alert_id}", headers={"Authorization": f"Bearer {self.key}"}
        )
        found: dict[str, Any] = response.json()
        return found

    def case(self, case_id: str) -> dict[str, Any]:
        response = self.harness.client.get(
            f"/serviceapi/cases/{case_id}", headers={"Authorization": f"Bearer {self.key}"}
        )
        found: dict[str, Any] = response.json()
        return found

    def wait_status(self, alert_id: str, status: int, timeout: float = 60.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        alert = self.alert(alert_id)
        while time.monotonic() < deadline:
            alert = self.alert(alert_id)
            if alert["investigation_status"] == status:
                return alert
            time.sleep(0.1)
        raise AssertionError(f"alert {alert_id} stayed {alert['investigation_status']}, wanted {status}")

    def question(self, count: int = 1, timeout: float = 30.0) -> tuple[str, str, dict[str, Any]]:
        """(channel, ts, message) of the `count`-th question the bot sent (a message with buttons)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            asked = [(key, m) for key, m in self.fake.messages.items() if buttons_of(m)]
            if len(asked) >= count:
                (channel, ts), message = sorted(asked, key=lambda item: item[0][1])[count - 1]
                self.buttons[(channel, ts)] = copy.deepcopy(buttons_of(message))  # pressable even after the update
                return channel, ts, message
            time.sleep(0.05)
        raise AssertionError("the fake Slack never received the checkpoint question")

    def wait_until_asked(self, timeout: float = 30.0) -> None:
        """Until the engine has recorded that it asked (the row is `waiting`), not only that Slack got the message:
        a stop between Slack's answer and that record (milliseconds) would, after a restart, ask again."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.harness.db.read() as session:
                if session.scalar(select(ChatCheckpoint.status).where(ChatCheckpoint.status == "waiting")):
                    return
            time.sleep(0.05)
        raise AssertionError("the engine never recorded the checkpoint question as asked")

    def press(self, decision: str, channel: str, ts: str, *, user_id: str = ASKED_ID, action_ts: str = "1.1") -> None:
        button = next(b for b in self.buttons[(channel, ts)] if json.loads(b["value"])["decision"] == decision)
        payload = block_actions(
            button["action_id"], button["value"], user_id=user_id, message_ts=ts, action_ts=action_ts
        )
        payload["container"]["channel_id"] = channel
        payload["channel"]["id"] = channel
        response = self.sender.interaction(self.token, payload)
        assert response.status_code == 200, response.text

    def reply(self, text: str, channel: str, event_id: str = "EvREPLY1") -> None:
        payload = message_im(event_id=event_id, text=text, user=ASKED_ID)
        payload["event"]["channel"] = channel
        response = self.sender.event(self.token, payload)
        assert response.status_code == 200, response.text

    def checkpoint_output(self, alert_uuid: str) -> dict[str, Any]:
        with self.harness.db.read() as session:
            row = session.scalar(
                select(InvestigationStep).where(
                    InvestigationStep.alert_uuid == uuid.UUID(alert_uuid), InvestigationStep.kind == "checkpoint"
                )
            )
            assert row is not None and row.output is not None
            output: dict[str, Any] = json.loads(row.output)
            return output

    def checkpoint_inputs(self, alert_uuid: str) -> dict[str, Any]:
        """What the checkpoint step recorded as its inputs (with the timeout it resolved and where from)."""
        inputs: dict[str, Any] = json.loads(checkpoint_step(self.harness, alert_uuid).inputs)
        return inputs

    def use_playbook(self, alert_type: str, definition: PlaybookDefinition) -> None:
        """Give the organization a playbook for the type before its first alert (instead of a drafted one)."""
        install_playbook(self.harness.db, "ACME", "okta", alert_type, definition)


def buttons_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    blocks = message.get("blocks") or []
    return [element for block in blocks if block.get("type") == "actions" for element in block.get("elements", [])]


@contextmanager
def running(settings: Settings, fake: SlackFake) -> Iterator[Checkpointed]:
    """An app with its engine; the organization and its Slack connection are created on the first start only."""
    with Harness(settings, engine=True) as harness:
        key = harness.add_key().api_key
        auth = {"Authorization": f"Bearer {key}"}
        connections = harness.client.get("/serviceapi/connections", headers=auth).json()["connections"]
        if not connections:
            harness.add_org("ACME")
            response = harness.client.post(
                "/serviceapi/connections",
                json={
                    "organization_code": "ACME",
                    "integration_id": "slack",
                    "name": "slack",
                    "fields": slack_values(fake),
                },
                headers=auth,
            )
            assert response.status_code == 201, response.text
            connections = [response.json()]
            # Authenticate completes the setup; only then are checkpoints drafted for the organization.
            tested = harness.client.post(
                f"/serviceapi/connections/{connections[0]['connection_uuid']}/test", headers=auth
            )
            assert tested.status_code == 200 and tested.json()["ok"] is True, tested.text
        yield Checkpointed(harness, key, fake, SlackSender(harness.client), connections[0]["webhook_token"])


def checkpoint_row(harness: Harness) -> ChatCheckpoint | None:
    """The (only) checkpoint row of the test's database."""
    with harness.db.read() as session:
        return session.scalar(select(ChatCheckpoint))


def checkpoint_step(harness: Harness, alert_uuid: str) -> InvestigationStep:
    with harness.db.read() as session:
        row = session.scalar(
            select(InvestigationStep).where(
                InvestigationStep.alert_uuid == uuid.UUID(alert_uuid), InvestigationStep.kind == "checkpoint"
            )
        )
        assert row is not None
        return row
