"""Chat Checkpoint test support: an app with its engine, a tested chat connection of ACME (Slack, or the tests'
second chat product, Webhook Chat), and helpers that play the asked person (press an answer, reply in the
conversation) and read what the investigation recorded.

A `ChatSide` is one chat product as the person sees it; the checkpoint tests run against either through it."""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import select

from tests.fakes import webhook_chat
from tests.fakes.fixtures import slack_values
from tests.fakes.webhook_chat import AnswerSender, WebhookChatFake
from tests.support import webhook_chat as webhook_chat_provider
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack.fake import SlackFake
from vigil.integrations.slack.fake_sender import SlackSender, block_actions, dm_reply, message_im
from vigil.investigations.models import ChatCheckpoint, InvestigationStep
from vigil.playbooks.schemas import PlaybookDefinition
from vigil.settings import Settings

ASKED = "spengler@ghostbusters.example.com"
ASKED_ID = slack.USERS[ASKED]["id"]
SIGN_IN_TYPE = "Suspicious sign-in"
OTHER_ID = "W0SOMEONEELSE"
ANSWER_LABELS = ["Confirm it was me", "It was not me"]


def sign_in_content(n: int = 1) -> str:
    return json.dumps({"userPrincipalName": ASKED, "ipAddress": f"198.51.100.{n}", "result": "success"})


@dataclass(frozen=True)
class Asked:
    """A question as the chat product shows it."""

    conversation: str
    message_id: str
    posted_at: str
    text: str
    raw: dict[str, Any]


class ChatSide(Protocol):
    """One chat product, as the asked person (and the product's deliveries to Vigil) see it."""

    integration_id: str
    asked_id: str
    unknown_person_error: str

    @property
    def hook_errors(self) -> list[BaseException]:
        """What the question-posted hook raised (the product still showed the question)."""
        ...

    def fields(self) -> dict[str, str]: ...

    def attach(self, harness: Harness, token: str) -> None: ...

    def questions(self) -> list[Asked]: ...

    def answer_labels(self, asked: Asked) -> list[str]: ...

    def shows_outcome(self, asked: Asked, answer: str) -> bool:
        """Whether the question now shows `answer` as recorded, with nothing left to press."""
        ...

    def press(
        self,
        asked: Asked,
        decision: str,
        *,
        user_id: str,
        nonce: str,
        redeliver: bool = False,
        secret: str | None = None,
        expect: int = 200,
    ) -> None:
        """Deliver a press signed with `secret` (default: the connection's) and check Vigil answers `expect`."""
        ...

    def reply(
        self,
        asked: Asked,
        text: str,
        *,
        event_id: str,
        user_id: str | None = None,
        posted_at: str | None = None,
        conversation: str | None = None,
    ) -> None: ...

    def on_question_posted(self, hook: Callable[[Asked], None]) -> None:
        """Call `hook` with each question after the product shows it and before Vigil has the answer to its post."""
        ...


SLACK_OUTCOMES = {
    "confirmed": "You confirmed it was you",
    "denied": "You said it was not you",
    "timeout": "No answer arrived in time",
}


@dataclass
class SlackSide:
    fake: SlackFake
    integration_id: str = "slack"
    asked_id: str = ASKED_ID
    unknown_person_error: str = "No Slack user"
    buttons: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    sender: SlackSender | None = None
    token: str = ""

    @property
    def hook_errors(self) -> list[BaseException]:
        return self.fake.hook_errors

    def fields(self) -> dict[str, str]:
        return slack_values(self.fake)

    def attach(self, harness: Harness, token: str) -> None:
        self.sender, self.token = SlackSender(harness.client), token

    def _asked(self, channel: str, ts: str, message: dict[str, Any]) -> Asked:
        self.buttons.setdefault((channel, ts), copy.deepcopy(buttons_of(message)))  # pressable after the update
        return Asked(channel, ts, ts, str(message.get("text", "")), message)

    def questions(self) -> list[Asked]:
        asked = sorted(((key, m) for key, m in self.fake.messages.items() if buttons_of(m)), key=lambda i: i[0][1])
        return [self._asked(channel, ts, message) for (channel, ts), message in asked]

    def answer_labels(self, asked: Asked) -> list[str]:
        return [b["text"]["text"] for b in self.buttons[(asked.conversation, asked.message_id)]]

    def shows_outcome(self, asked: Asked, answer: str) -> bool:
        now = self.fake.messages[(asked.conversation, asked.message_id)]
        return SLACK_OUTCOMES[answer] in now["text"] and not buttons_of(now)

    def press(
        self,
        asked: Asked,
        decision: str,
        *,
        user_id: str,
        nonce: str,
        redeliver: bool = False,
        secret: str | None = None,
        expect: int = 200,
    ) -> None:
        assert self.sender is not None
        buttons = self.buttons[(asked.conversation, asked.message_id)]
        button = next(b for b in buttons if json.loads(b["value"])["decision"] == decision)
        payload = block_actions(
            button["action_id"], button["value"], user_id=user_id, message_ts=asked.message_id, action_ts=nonce
        )
        payload["container"]["channel_id"] = asked.conversation
        payload["channel"]["id"] = asked.conversation
        for retry in (None, 1) if redeliver else (None,):  # Slack's retry of the same press: recorded once
            response = self.sender.interaction(self.token, payload, retry_num=retry, secret=secret)
            assert response.status_code == expect, response.text

    def reply(
        self,
        asked: Asked,
        text: str,
        *,
        event_id: str,
        user_id: str | None = None,
        posted_at: str | None = None,
        conversation: str | None = None,
    ) -> None:
        assert self.sender is not None
        channel = conversation or asked.conversation
        if posted_at is None:
            payload = message_im(event_id=event_id, text=text, user=user_id or self.asked_id)
            payload["event"]["channel"] = channel
        else:
            payload = dm_reply(text, channel=channel, user_id=user_id or self.asked_id, ts=posted_at, event_id=event_id)
        response = self.sender.event(self.token, payload)
        assert response.status_code == 200, response.text

    def on_question_posted(self, hook: Callable[[Asked], None]) -> None:
        self.fake.before_post_answer = lambda channel, ts, message: hook(self._asked(channel, ts, message))


@dataclass
class WebhookChatSide:
    fake: WebhookChatFake
    integration_id: str = webhook_chat_provider.INTEGRATION_ID
    asked_id: str = webhook_chat.PEOPLE[ASKED]["id"]
    unknown_person_error: str = "No such person in Webhook Chat"
    sender: AnswerSender | None = None
    token: str = ""

    @property
    def hook_errors(self) -> list[BaseException]:
        return self.fake.hook_errors

    def fields(self) -> dict[str, str]:
        return {
            "base_url": self.fake.url,
            "api_key": webhook_chat.API_KEY,
            "signing_secret": webhook_chat.SIGNING_SECRET,
        }

    def attach(self, harness: Harness, token: str) -> None:
        webhook_chat_provider.mount(harness.app)
        self.sender, self.token = AnswerSender(harness.client), token

    @staticmethod
    def _asked(question: dict[str, Any]) -> Asked:
        shown = copy.deepcopy(question)  # its answers stay pressable after the outcome replaced them
        return Asked(shown["conversation"], shown["message_id"], shown["posted_at"], shown["text"], shown)

    def questions(self) -> list[Asked]:
        return [self._asked(q) for q in self.fake.questions]

    def answer_labels(self, asked: Asked) -> list[str]:
        return [a["label"] for a in asked.raw["answers"]]

    def shows_outcome(self, asked: Asked, answer: str) -> bool:
        now = next(q for q in self.fake.questions if q["message_id"] == asked.message_id)
        return bool(now["outcome"] == answer and not now["answers"])

    def _deliver(self, kind: str, payload: dict[str, Any], *, secret: str | None = None, expect: int = 200) -> None:
        assert self.sender is not None
        path = f"{webhook_chat_provider.ANSWERS_PATH}/{kind}"
        response = self.sender.deliver(path, self.token, payload, secret=secret)
        assert response.status_code == expect, response.text

    def press(
        self,
        asked: Asked,
        decision: str,
        *,
        user_id: str,
        nonce: str,
        redeliver: bool = False,
        secret: str | None = None,
        expect: int = 200,
    ) -> None:
        payload = webhook_chat.press(asked.raw, decision, user_id=user_id)
        for _ in range(2 if redeliver else 1):
            self._deliver("press", payload, secret=secret, expect=expect)

    def reply(
        self,
        asked: Asked,
        text: str,
        *,
        event_id: str,
        user_id: str | None = None,
        posted_at: str | None = None,
        conversation: str | None = None,
    ) -> None:
        payload = webhook_chat.reply(
            text,
            conversation=conversation or asked.conversation,
            user_id=user_id or self.asked_id,
            posted_at=posted_at or f"{time.time():.6f}",
        )
        self._deliver("reply", payload)

    def on_question_posted(self, hook: Callable[[Asked], None]) -> None:
        self.fake.before_post_answer = lambda question: hook(self._asked(question))


@dataclass
class Checkpointed:
    harness: Harness
    key: str
    side: ChatSide
    token: str

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

    def question(self, count: int = 1, timeout: float = 30.0) -> Asked:
        """The `count`-th question the chat product received (a message with answers to press)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            asked = self.side.questions()
            if len(asked) >= count:
                return asked[count - 1]
            time.sleep(0.05)
        raise AssertionError(f"{self.side.integration_id} never received the checkpoint question")

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

    def press(self, decision: str, asked: Asked, *, user_id: str | None = None, nonce: str = "1.1") -> None:
        self.side.press(asked, decision, user_id=user_id or self.side.asked_id, nonce=nonce)

    def reply(self, text: str, asked: Asked, event_id: str = "EvREPLY1") -> None:
        self.side.reply(asked, text, event_id=event_id)

    @property
    def slack(self) -> SlackSide:
        """The Slack side, for tests of Slack's own behaviour."""
        assert isinstance(self.side, SlackSide)
        return self.side

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
def running(settings: Settings, side: ChatSide) -> Iterator[Checkpointed]:
    """An app with its engine; the organization and its chat connection are created on the first start only."""
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
                    "integration_id": side.integration_id,
                    "name": side.integration_id,
                    "fields": side.fields(),
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
        side.attach(harness, connections[0]["webhook_token"])
        yield Checkpointed(harness, key, side, connections[0]["webhook_token"])


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
