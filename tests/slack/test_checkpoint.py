"""Chat Checkpoint end to end: the engine asks in Slack (the fake), Slack (the signing sender) answers,
the playbook resumes with the answer as evidence. SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from tests.engine.conftest import engine_settings
from tests.fakes import slack
from tests.fakes.fixtures import slack_values
from tests.fakes.slack import SlackFake
from tests.fakes.slack_sender import SlackSender, block_actions, message_im
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.alerts.constants import InvestigationStatus
from vigil.investigations.models import ChatCheckpoint, InvestigationStep
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition
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
            asked = [(key, m) for key, m in self.fake.messages.items() if _buttons(m)]
            if len(asked) >= count:
                (channel, ts), message = sorted(asked, key=lambda item: item[0][1])[count - 1]
                self.buttons[(channel, ts)] = copy.deepcopy(_buttons(message))  # pressable even after the update
                return channel, ts, message
            time.sleep(0.05)
        raise AssertionError("the fake Slack never received the checkpoint question")

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

    def use_playbook(self, alert_type: str, definition: PlaybookDefinition) -> None:
        """Give the organization a playbook for the type before its first alert (instead of a drafted one)."""
        install_playbook(self.harness.db, "ACME", "okta", alert_type, definition)


def _buttons(message: dict[str, Any]) -> list[dict[str, Any]]:
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


@pytest.fixture
def chat_engine(db_url: str, tmp_path: Path, slack_fake: SlackFake) -> Iterator[Checkpointed]:
    with running(engine_settings(db_url, tmp_path, chat_api_url=slack_fake.api_url), slack_fake) as started:
        yield started


def test_it_was_not_me_button_resumes_the_playbook_and_raises_the_case(chat_engine: Checkpointed) -> None:
    alert = chat_engine.post_sign_in()
    channel, ts, message = chat_engine.question()
    assert chat_engine.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS
    assert channel == "D069C7QFK" and alert["alert_id"] in json.dumps(message["blocks"])
    assert [b["text"]["text"] for b in _buttons(message)] == ["Confirm it was me", "It was not me"]

    chat_engine.press("denied", channel, ts)
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert evidence["answer"] == "denied" and evidence["answered_via"] == "button"
    assert evidence["answered_by"] == ASKED and ASKED_ID in evidence["answered_by_slack"]
    assert isinstance(evidence["answered_at"], int) and evidence["message_updated"] is True
    case = chat_engine.case(done["case_id"])
    in_case = next(item for item in case["evidence"] if item["kind"] == "checkpoint")
    assert in_case["status"] == "ok" and in_case["output"]["answer"] == "denied"
    assert in_case["output"]["answered_by"] == ASKED
    assert case["verdict"] in ("malicious", "suspicious") and case["severity"] in ("medium", "high", "critical")
    assert any("answered that the activity was not them" in finding for finding in case["findings"])
    updated = chat_engine.fake.messages[(channel, ts)]
    assert "You said it was not you" in updated["text"] and not _buttons(updated)
    timeline = [event["kind"] for event in chat_engine.alert(alert["alert_id"])["timeline"]]
    assert "checkpoint_asked" in timeline and "checkpoint_answered" in timeline


def test_yes_reply_in_the_dm_confirms_and_lowers_an_uncontradicted_case(chat_engine: Checkpointed) -> None:
    alert = chat_engine.post_sign_in()
    channel, ts, _ = chat_engine.question()
    chat_engine.reply("Yes, that was me", channel)
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert evidence["answer"] == "confirmed" and evidence["answered_via"] == "dm"
    case = chat_engine.case(done["case_id"])
    assert case["verdict"] == "benign" and case["ai_disposition"] == "benign_true_positive"
    assert any("confirmed the activity was them" in finding for finding in case["findings"])
    assert "You confirmed it was you" in chat_engine.fake.messages[(channel, ts)]["text"]


def test_unclear_replies_and_other_people_do_not_answer(chat_engine: Checkpointed) -> None:
    alert = chat_engine.post_sign_in()
    channel, ts, _ = chat_engine.question()
    chat_engine.reply("what is this about?", channel, event_id="EvUNCLEAR")
    chat_engine.press("confirmed", channel, ts, user_id="W0SOMEONEELSE")
    time.sleep(1.0)
    assert chat_engine.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS
    with chat_engine.harness.db.read() as session:
        assert session.scalar(select(ChatCheckpoint.status)) == "waiting"

    chat_engine.press("denied", channel, ts, action_ts="2.2")
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    # A second press after the answer (and a late DM) change nothing.
    chat_engine.press("confirmed", channel, ts, action_ts="3.3")
    chat_engine.reply("yes", channel, event_id="EvLATE")
    time.sleep(0.5)
    with chat_engine.harness.db.read() as session:
        row = session.scalar(select(ChatCheckpoint))
        assert row is not None and (row.status, row.answer, row.answered_via) == ("answered", "denied", "button")
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answer"] == "denied"


def test_unanswered_checkpoint_times_out_and_the_playbook_continues(chat_engine: Checkpointed) -> None:
    chat_engine.use_playbook(
        SIGN_IN_TYPE,
        PlaybookDefinition(
            steps=[
                CheckpointStep(
                    name="Ask the user",
                    user_email="{{ entities.emails[0] }}",
                    question="Did you just sign in from {{ entities.ips[0] }}?",
                    timeout_seconds=5,
                ),
                AnalyzeStep(name="AI analysis"),
            ]
        ),
    )
    alert = chat_engine.post_sign_in(n=9)
    channel, ts, message = chat_engine.question()
    assert "198.51.100.9" in message["text"]
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED, timeout=40)

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert evidence["answer"] == "timeout" and evidence["answered_by"] is None
    case = chat_engine.case(done["case_id"])
    assert any("timed out" in finding for finding in case["findings"])
    assert "No answer arrived in time" in chat_engine.fake.messages[(channel, ts)]["text"]
    # An answer after the timeout is not taken.
    chat_engine.press("denied", channel, ts)
    with chat_engine.harness.db.read() as session:
        assert session.scalar(select(ChatCheckpoint.answer)) == "timeout"


def test_no_checkpoint_is_drafted_before_the_slack_connection_is_authenticated(
    db_url: str, tmp_path: Path, slack_fake: SlackFake
) -> None:
    with Harness(engine_settings(db_url, tmp_path, chat_api_url=slack_fake.api_url), engine=True) as harness:
        harness.add_org("ACME")
        key = harness.add_key("ACME").api_key
        created = harness.client.post(
            "/serviceapi/connections",
            json={
                "organization_code": "ACME",
                "integration_id": "slack",
                "name": "s",
                "fields": slack_values(slack_fake),
            },
            headers={"Authorization": f"Bearer {key}"},
        )
        assert created.status_code == 201
        body = harness.alert_body(provider="okta", alert_type=SIGN_IN_TYPE, alert_content=sign_in_content())
        harness.post_alert(key, body)
        harness.wait_for(key, lambda alerts: alerts and alerts[0]["investigation_status"] == 15)
        with harness.db.read() as session:
            kinds = list(session.scalars(select(InvestigationStep.kind)))
        assert "checkpoint" not in kinds and not slack_fake.messages


def test_user_unknown_to_slack_is_a_failed_step_not_a_stuck_alert(chat_engine: Checkpointed) -> None:
    body = chat_engine.harness.alert_body(
        provider="okta",
        alert_type=SIGN_IN_TYPE,
        alert_content=json.dumps({"userPrincipalName": "nobody@acme.example", "ipAddress": "198.51.100.3"}),
    )
    alert = chat_engine.harness.post_alert(chat_engine.key, body).json()
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    with chat_engine.harness.db.read() as session:
        step = session.scalar(select(InvestigationStep).where(InvestigationStep.kind == "checkpoint"))
        assert step is not None and step.status == "error"
        assert step.error is not None and "nobody@acme.example" in step.error and "No Slack user" in step.error


def test_checkpoint_survives_a_worker_restart_while_waiting(db_url: str, tmp_path: Path, slack_fake: SlackFake) -> None:
    settings = engine_settings(db_url, tmp_path, chat_api_url=slack_fake.api_url)
    with running(settings, slack_fake) as first:
        alert = first.post_sign_in()
        first.question()
    # The worker (and the app with it) stopped while the question was open; a new one starts.
    with running(settings, slack_fake) as again:
        channel, ts, _ = again.question()
        assert again.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS
        again.press("denied", channel, ts)
        again.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
        assert again.checkpoint_output(alert["alert_uuid"])["answer"] == "denied"
    assert len([m for m in slack_fake.messages.values() if _buttons(m) or "not you" in m["text"]]) == 1
