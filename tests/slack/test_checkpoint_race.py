"""Answers that arrive while the checkpoint's question is still being recorded (row `asking`): the chat fake
(Slack, or the tests' second chat product) delivers a signed press (Slack: E5) or reply (Slack: E4) to the app
from inside its post-the-question call, before Vigil has the answer to it, exactly as a quick person and the
product can. SQLite and PostgreSQL."""

from __future__ import annotations

import time
from decimal import Decimal

from sqlalchemy import func, select

from tests.slack.checkpointing import ASKED, OTHER_ID, Asked, Checkpointed, checkpoint_row
from vigil.alerts.constants import InvestigationStatus
from vigil.investigations.models import ChatEarlyAnswer
from vigil.investigations.workflow import CHECKPOINT_SLICE_SECONDS


def _status(chat: Checkpointed) -> str | None:
    row = checkpoint_row(chat.harness)
    return row.status if row is not None else None


def _press_while_asking(
    chat: Checkpointed, *presses: tuple[str, str | None], seen: list[str | None], posted: list[Asked] | None = None
) -> None:
    """Before the post of the question is answered, press (decision, user; None: the asked person) in order, each
    also redelivered by the product."""

    def press(asked: Asked) -> None:
        if posted is not None:
            posted.append(asked)
        seen.append(_status(chat))
        for n, (decision, user_id) in enumerate(presses):
            user = user_id or chat.side.asked_id
            chat.side.press(asked, decision, user_id=user, nonce=f"{asked.message_id}{n}", redeliver=True)
        seen.append(_status(chat))

    chat.side.on_question_posted(press)


def _early_rows(chat: Checkpointed) -> int:
    with chat.harness.db.read() as session:
        return session.scalar(select(func.count()).select_from(ChatEarlyAnswer)) or 0


def test_press_before_the_question_is_recorded_answers_it_at_once(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []
    posted: list[Asked] = []
    _press_while_asking(chat_engine, ("denied", None), seen=seen, posted=posted)
    started = time.monotonic()
    alert = chat_engine.post_sign_in()
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    # The press really arrived while the row was `asking`, and the wait ended without waiting out a slice.
    assert seen == ["asking", "asking"] and chat_engine.side.hook_errors == []
    assert time.monotonic() - started < CHECKPOINT_SLICE_SECONDS

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert (evidence["answer"], evidence["answered_via"], evidence["answered_by"]) == ("denied", "button", ASKED)
    assert chat_engine.side.asked_id in evidence["answered_by_account"] and evidence["message_updated"] is True
    case = chat_engine.case(done["case_id"])
    in_case = next(item for item in case["evidence"] if item["kind"] == "checkpoint")
    assert in_case["status"] == "ok" and in_case["output"]["answer"] == "denied"
    assert any("answered that it was NOT them" in finding for finding in case["findings"])
    timeline = [event["kind"] for event in chat_engine.alert(alert["alert_id"])["timeline"]]
    assert timeline.count("checkpoint_asked") == 1 and timeline.count("checkpoint_answered") == 1
    assert _early_rows(chat_engine) == 0

    # A press after the answer stands changes nothing.
    chat_engine.press("confirmed", posted[0], nonce="9.9")
    row = checkpoint_row(chat_engine.harness)
    assert row is not None and (row.status, row.answer, row.answered_via) == ("answered", "denied", "button")
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answer"] == "denied"


def test_press_by_someone_else_while_asking_is_ignored(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []
    _press_while_asking(chat_engine, ("confirmed", OTHER_ID), seen=seen)
    alert = chat_engine.post_sign_in()
    asked = chat_engine.question()
    deadline = time.monotonic() + 10
    while _status(chat_engine) == "asking" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen == ["asking", "asking"] and chat_engine.side.hook_errors == []
    time.sleep(1.0)
    assert _status(chat_engine) == "waiting" and _early_rows(chat_engine) == 0
    assert chat_engine.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS

    chat_engine.press("denied", asked)
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert (evidence["answer"], evidence["answered_by"]) == ("denied", ASKED)


def test_asked_users_press_wins_over_an_earlier_press_by_someone_else(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []
    _press_while_asking(chat_engine, ("confirmed", OTHER_ID), ("denied", None), ("confirmed", None), seen=seen)
    alert = chat_engine.post_sign_in()
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert seen == ["asking", "asking"]
    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    # The asked user's first press counts, as `waiting → answered` would have taken it.
    assert (evidence["answer"], evidence["answered_by"]) == ("denied", ASKED)
    assert OTHER_ID not in (evidence["answered_by_account"] or "")


def test_dm_reply_before_the_question_is_recorded_answers_it(chat_engine: Checkpointed) -> None:
    seen: list[str | None] = []

    def reply(asked: Asked) -> None:
        seen.append(_status(chat_engine))
        ts = Decimal(asked.posted_at)
        side = chat_engine.side
        side.reply(asked, "yes", posted_at=str(ts - 60), event_id="EvOLD")
        for _ in range(2):
            side.reply(asked, "no, not me", posted_at=str(ts + 1), event_id="EvNEW")
        side.reply(asked, "yes", posted_at=str(ts + 2), event_id="EvX", conversation="D0OTHERDM")
        seen.append(_status(chat_engine))

    chat_engine.side.on_question_posted(reply)
    alert = chat_engine.post_sign_in()
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert seen == ["asking", "asking"] and chat_engine.side.hook_errors == []
    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    # The reply posted after the question, in its DM, answers; one from before it or another DM does not.
    assert (evidence["answer"], evidence["answered_via"], evidence["answered_by"]) == ("denied", "dm", ASKED)


def test_reply_older_than_the_question_does_not_answer_it(chat_engine: Checkpointed) -> None:
    def reply(asked: Asked) -> None:
        chat_engine.side.reply(asked, "yes", posted_at=str(Decimal(asked.posted_at) - 1), event_id="EvBEFORE")

    chat_engine.side.on_question_posted(reply)
    alert = chat_engine.post_sign_in()
    asked = chat_engine.question()
    time.sleep(1.5)
    assert _status(chat_engine) == "waiting" and chat_engine.side.hook_errors == []
    chat_engine.press("confirmed", asked)
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answered_via"] == "button"
