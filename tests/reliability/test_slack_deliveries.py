"""Hostile Slack deliveries against a live Chat Checkpoint (issue 14 item 8).

An investigation waits at a checkpoint. Deliveries that Slack did not sign for this connection (unsigned, wrong
signature, timestamp more than 5 minutes old or ahead, unknown or missing connection token) and oversize bodies are
each tried as an E4 DM reply and as an E5 button press: every one must be refused (401, or 413 for the size) and
change nothing (no delivery row, checkpoint still waiting, alert still InProgress). Then the real press resolves it,
and replays of that press and of a DM reply (same body and signature, or re-signed as Slack's retries are) are
answered 200 but processed once: one answer, one resume, one case.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from httpx2 import Response  # the client starlette.testclient uses when it is installed (it is, via openai)
from sqlalchemy import func, select

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import vendor_urls
from tests.reliability.record import record
from tests.slack.checkpointing import ASKED_ID, Checkpointed, SlackSide, running
from vigil.alerts.constants import InvestigationStatus
from vigil.integrations.slack.fake import SlackFake
from vigil.integrations.slack.fake_sender import EVENTS_PATH, INTERACTIONS_PATH, block_actions, message_im
from vigil.integrations.slack.models import ChatEvent, ChatInteraction
from vigil.investigations.models import ChatCheckpoint, InvestigationStep

STALE = 301  # seconds: just past Slack's 5-minute window


@pytest.fixture(scope="module")
def slack_vendor() -> Iterator[SlackFake]:
    fake = SlackFake()
    with fake.serve():
        yield fake


@pytest.fixture
def waiting(db_url: str, backend: str, tmp_path: Path, slack_vendor: SlackFake) -> Iterator[Checkpointed]:
    slack_vendor.reset()
    settings = engine_settings(
        db_url, tmp_path, vendor_urls=vendor_urls(slack=slack_vendor.api_url), executor_id=f"slack-deliveries-{backend}"
    )
    with running(settings, SlackSide(slack_vendor)) as started:
        yield started


@dataclass(frozen=True)
class Delivery:
    """One E4 or E5 request exactly as it goes on the wire, so it can be sent again byte for byte."""

    path: str
    body: bytes
    content_type: str

    def send(self, chat: Checkpointed, token: str | None, headers: dict[str, str]) -> Response:
        sender = chat.slack.sender
        assert sender is not None
        return sender.post(self.path, token, self.body, {"Content-Type": self.content_type, **headers})

    def signed(self, chat: Checkpointed, *, timestamp: int | None = None, secret: str | None = None) -> dict[str, str]:
        sender = chat.slack.sender
        assert sender is not None
        headers = sender.headers(self.body, self.content_type, timestamp=timestamp, secret=secret)
        return {k: v for k, v in headers.items() if k != "Content-Type"}


def dm_reply(channel: str, text: str, event_id: str) -> Delivery:
    payload = message_im(event_id=event_id, text=text, user=ASKED_ID)
    payload["event"]["channel"] = channel
    return Delivery(EVENTS_PATH, json.dumps(payload).encode(), "application/json")


def press(chat: Checkpointed, decision: str, channel: str, ts: str, action_ts: str) -> Delivery:
    button = next(b for b in chat.slack.buttons[(channel, ts)] if json.loads(b["value"])["decision"] == decision)
    payload = block_actions(button["action_id"], button["value"], user_id=ASKED_ID, message_ts=ts, action_ts=action_ts)
    payload["container"]["channel_id"] = channel
    payload["channel"]["id"] = channel
    body = ("payload=" + quote(json.dumps(payload))).encode()
    return Delivery(INTERACTIONS_PATH, body, "application/x-www-form-urlencoded")


def padded(delivery: Delivery, size: int) -> Delivery:
    """The same delivery grown past ``size`` bytes (JSON whitespace / an extra form field), still well-formed."""
    if delivery.content_type == "application/json":
        return Delivery(delivery.path, delivery.body + b" " * size, delivery.content_type)
    return Delivery(delivery.path, delivery.body + b"&pad=" + b"x" * size, delivery.content_type)


@dataclass
class State:
    events: int
    interactions: int
    checkpoint: tuple[str, str | None, int | None]
    alert_status: int
    checkpoint_steps: int

    @classmethod
    def of(cls, chat: Checkpointed, alert: dict[str, str]) -> State:
        with chat.harness.db.read() as session:
            row = session.scalar(select(ChatCheckpoint))
            assert row is not None
            steps = session.scalar(
                select(func.count())
                .select_from(InvestigationStep)
                .where(
                    InvestigationStep.alert_uuid == uuid.UUID(alert["alert_uuid"]),
                    InvestigationStep.kind == "checkpoint",
                )
            )
            return cls(
                events=session.scalar(select(func.count()).select_from(ChatEvent)) or 0,
                interactions=session.scalar(select(func.count()).select_from(ChatInteraction)) or 0,
                checkpoint=(row.status, row.answer, row.answered_at),
                alert_status=chat.alert(alert["alert_id"])["investigation_status"],
                checkpoint_steps=steps or 0,
            )


Hostile = Callable[[Checkpointed, Delivery], Response]
HOSTILE: dict[str, tuple[Hostile, int]] = {
    "unsigned": (lambda chat, d: d.send(chat, chat.token, {}), 401),
    "wrong signature": (lambda chat, d: d.send(chat, chat.token, d.signed(chat, secret="not-the-signing-secret")), 401),
    "stale timestamp (> 5 min)": (
        lambda chat, d: d.send(chat, chat.token, d.signed(chat, timestamp=int(time.time()) - STALE)),
        401,
    ),
    "future timestamp (> 5 min)": (
        # +2: int() drops up to a second and a loaded machine verifies a moment later, both shrinking the skew.
        lambda chat, d: d.send(chat, chat.token, d.signed(chat, timestamp=int(time.time()) + STALE + 2)),
        401,
    ),
    "unknown connection token": (lambda chat, d: d.send(chat, "whk_" + "0" * 40, d.signed(chat)), 401),
    "no connection token": (lambda chat, d: d.send(chat, None, d.signed(chat)), 401),
    "oversize body (signed)": (
        lambda chat, d: (big := padded(d, chat.harness.settings.max_body_bytes)).send(
            chat, chat.token, big.signed(chat)
        ),
        413,
    ),
}


def test_hostile_deliveries_are_refused_and_replays_processed_once(waiting: Checkpointed, backend: str) -> None:
    chat = waiting
    alert = chat.post_sign_in()
    asked = chat.question()
    channel, ts = asked.conversation, asked.message_id
    chat.wait_status(alert["alert_id"], InvestigationStatus.IN_PROGRESS)
    time.sleep(0.5)  # the question is out; let the step record it before the baseline is read
    baseline = State.of(chat, alert)
    assert baseline.checkpoint[0] == "waiting", baseline

    deliveries = {
        "DM reply": dm_reply(channel, "No, that was not me", "EvHOSTILE1"),
        "button press": press(chat, "denied", channel, ts, "7.7"),
    }
    failures: list[str] = []
    for label, (send, expected) in HOSTILE.items():
        statuses = {kind: send(chat, delivery).status_code for kind, delivery in deliveries.items()}
        after = State.of(chat, alert)
        held = all(s == expected for s in statuses.values()) and after == baseline
        record(
            f"Slack delivery refused: {label}",
            len(statuses),
            "deliveries",
            held,
            f"E4/E5 answered {statuses} (want {expected}); rows, checkpoint and alert "
            f"{'unchanged' if after == baseline else f'CHANGED {baseline} -> {after}'}",
            backend=backend,
        )
        if not held:
            failures.append(f"{label}: {statuses}, {after}")
    assert not failures, failures

    # The genuine press resolves the checkpoint; its exact replay, a re-signed copy (Slack's retry) and the replays
    # of a DM reply (same event id) must not answer or resume it again.
    button = deliveries["button press"]
    original_headers = button.signed(chat)
    assert button.send(chat, chat.token, original_headers).status_code == 200
    done = chat.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    reply = deliveries["DM reply"]
    reply_headers = reply.signed(chat)
    assert reply.send(chat, chat.token, reply_headers).status_code == 200  # late, so recorded but no answer
    answered = State.of(chat, alert)
    replays = [
        button.send(chat, chat.token, original_headers),
        button.send(chat, chat.token, {**button.signed(chat), "X-Slack-Retry-Num": "1"}),
        reply.send(chat, chat.token, reply_headers),
        reply.send(chat, chat.token, {**reply.signed(chat), "X-Slack-Retry-Num": "2"}),
    ]
    time.sleep(1.0)  # a second resume, if any, would run now
    final = State.of(chat, alert)
    timeline = [e["kind"] for e in chat.alert(alert["alert_id"])["timeline"]]
    completions = [e for e in chat.alert(alert["alert_id"])["timeline"] if e.get("to_status") == 15]
    replayed = [r.status_code for r in replays]
    once = (
        final.interactions == answered.interactions
        and final.events == answered.events
        and final.checkpoint == answered.checkpoint
        and final.checkpoint_steps == 1
        and timeline.count("checkpoint_answered") == 1
        and len(completions) == 1
    )
    held = replayed == [200] * len(replays) and once and answered.checkpoint[1] == "denied"
    record(
        "Slack delivery replayed (same press byte for byte, re-signed retry, DM with a seen event id)",
        len(replays),
        "deliveries",
        held,
        f"answered {replayed}; checkpoint {final.checkpoint[0]}/{final.checkpoint[1]}, "
        f"{timeline.count('checkpoint_answered')} answer and {len(completions)} completion in the timeline, "
        f"{final.interactions} interaction and {final.events} event rows (same as before the replays)",
        backend=backend,
    )
    assert done["case_id"]
    assert held, (replayed, answered, final, timeline)
