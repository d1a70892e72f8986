"""Answers that arrive while the checkpoint's question is still being recorded (row `asking`): the Slack fake
delivers a signed E5 press (or E4 reply) to the app from inside chat.postMessage, before Vigil has the
answer to it, exactly as a quick person and Slack can. SQLite and PostgreSQL."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select

from tests.fakes.slack_sender import button_press, dm_reply
from tests.slack.checkpointing import ASKED, ASKED_ID, Checkpointed, checkpoint_row
from vigil.alerts.constants import InvestigationStatus
from vigil.investigations.models import ChatEarlyAnswer
from vigil.investigations.workflow import CHECKPOINT_SLICE_SECONDS

OTHER_ID = "W0SOMEONEELSE"


def _status(chat: Checkpointed) -> str | None:
    row = checkpoint_row(chat.harness)
    return row.status if row is not None else None


Posted = list[tuple[str, str, dict[str, Any]]]


def _press_while_asking(
    chat: Checkpointed, *presses: tuple[str, str], seen: list[str | None], posted: Posted | None = None
) -> None:
    """Before chat.postMessage answers, press (decision, user) in order, each also redelivered by Slack."""

    def press(channel: str, ts: str, message: dict[str, Any]) -> None:
        if posted is not None:
            posted.append((channel, ts, message))
        seen.append(_status(chat))
        for n, (decision, user_id) in enumerate(presses):
            payload = button_press(message, decision, channel=channel, user_id=user_id, action_ts=f"{ts}{n}")
            for retry in (None, 1):  # Slack's retry of the same press: recorded once
                response = chat.sender.interaction(chat.token, payload, retry_num=retry)
                assert response.status_code == 200, response.text
        seen.append(_status(chat))

    chat.fake.before_post_answer = press


def _early_rows(chat: Checkpointed) -> int:
    with chat.harness.db.read() as session:
        return session.scalar(select(func.count()).select_from(ChatEarlyAnswer)) or 0


def test_press_before_the_question_is_recorded_answers_it_at_once(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []
    posted: Posted = []
    _press_while_asking(chat_engine, ("denied", ASKED_ID), seen=seen, posted=posted)
    started = time.monotonic()
    alert = chat_engine.post_sign_in()
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    # The press really arrived while the row was `asking`, and the wait ended without waiting out a slice.
    assert seen == ["asking", "asking"] and chat_engine.fake.hook_errors == []
    assert time.monotonic() - started < CHECKPOINT_SLICE_SECONDS

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert (evidence["answer"], evidence["answered_via"], evidence["answered_by"]) == ("denied", "button", ASKED)
    assert ASKED_ID in evidence["answered_by_account"] and evidence["message_updated"] is True
    case = chat_engine.case(done["case_id"])
    in_case = next(item for item in case["evidence"] if item["kind"] == "checkpoint")
    assert in_case["status"] == "ok" and in_case["output"]["answer"] == "denied"
    assert any("answered that it was NOT them" in finding for finding in case["findings"])
    timeline = [event["kind"] for event in chat_engine.alert(alert["alert_id"])["timeline"]]
    assert timeline.count("checkpoint_asked") == 1 and timeline.count("checkpoint_answered") == 1
    assert _early_rows(chat_engine) == 0

    # A press after the answer stands changes nothing.
    channel, _, question = posted[0]
    payload = button_press(question, "confirmed", channel=channel, user_id=ASKED_ID, action_ts="9.9")
    assert chat_engine.sender.interaction(chat_engine.token, payload).status_code == 200
    row = checkpoint_row(chat_engine.harness)
    assert row is not None and (row.status, row.answer, row.answered_via) == ("answered", "denied", "button")
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answer"] == "denied"


def test_press_by_someone_else_while_asking_is_ignored(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []
    _press_while_asking(chat_engine, ("confirmed", OTHER_ID), seen=seen)
    alert = chat_engine.post_sign_in()
    channel, ts, _ = chat_engine.question()
    deadline = time.monotonic() + 10
    while _status(chat_engine) == "asking" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen == ["asking", "asking"] and chat_engine.fake.hook_errors == []
    time.sleep(1.0)
    assert _status(chat_engine) == "waiting" and _early_rows(chat_engine) == 0
    assert chat_engine.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS

    chat_engine.press("denied", channel, ts)
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert (evidence["answer"], evidence["answered_by"]) == ("denied", ASKED)


def test_asked_users_press_wins_over_an_earlier_press_by_someone_else(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []
    _press_while_asking(chat_engine, ("confirmed", OTHER_ID), ("denied", ASKED_ID), ("confirmed", ASKED_ID), seen=seen)
    alert = chat_engine.post_sign_in()
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert seen == ["asking", "asking"]
    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    # The asked user's first press counts, as `waiting → answered` would have taken it.
    assert (evidence["answer"], evidence["answered_by"]) == ("denied", ASKED)
    assert OTHER_ID not in (evidence["answered_by_account"] or "")


def test_dm_reply_before_the_question_is_recorded_answers_it(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []

    def reply(channel: str, ts: str, message: dict[str, Any]) -> None:
        seen.append(_status(chat_engine))
        older = dm_reply("yes", channel=channel, user_id=ASKED_ID, ts=str(Decimal(ts) - 60), event_id="EvOLD")
        newer = dm_reply("no, not me", channel=channel, user_id=ASKED_ID, ts=str(Decimal(ts) + 1), event_id="EvNEW")
        elsewhere = dm_reply("yes", channel="D0OTHERDM", user_id=ASKED_ID, ts=str(Decimal(ts) + 2), event_id="EvX")
        for payload in (older, newer, newer, elsewhere):
            assert chat_engine.sender.event(chat_engine.token, payload).status_code == 200
        seen.append(_status(chat_engine))

    chat_engine.fake.before_post_answer = reply
    alert = chat_engine.post_sign_in()
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert seen == ["asking", "asking"] and chat_engine.fake.hook_errors == []
    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    # The reply posted after the question, in its DM, answers; one from before it or another DM does not.
    assert (evidence["answer"], evidence["answered_via"], evidence["answered_by"]) == ("denied", "dm", ASKED)


def test_reply_older_than_the_question_does_not_answer_it(chat_engine: Checkpointed) -> None:
    def reply(channel: str, ts: str, message: dict[str, Any]) -> None:
        payload = dm_reply("yes", channel=channel, user_id=ASKED_ID, ts=str(Decimal(ts) - 1), event_id="EvBEFORE")
        assert chat_engine.sender.event(chat_engine.token, payload).status_code == 200

    chat_engine.fake.before_post_answer = reply
    alert = chat_engine.post_sign_in()
    channel, ts, _ = chat_engine.question()
    time.sleep(1.5)
    assert _status(chat_engine) == "waiting" and chat_engine.fake.hook_errors == []
    chat_engine.press("confirmed", channel, ts)
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answered_via"] == "button"
