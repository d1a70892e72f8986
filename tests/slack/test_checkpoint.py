"""Chat Checkpoint end to end: the engine asks in chat (the Slack fake, or the tests' second chat product), the
product (signing its deliveries) answers, the playbook resumes with the answer as evidence. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from pathlib import Path

from sqlalchemy import select

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import slack_values, vendor_urls
from tests.slack.checkpointing import (
    ANSWER_LABELS,
    ASKED,
    OTHER_ID,
    SIGN_IN_TYPE,
    Checkpointed,
    SlackSide,
    buttons_of,
    checkpoint_row,
    running,
    sign_in_content,
)
from tests.support.harness import Harness
from vigil.alerts.constants import InvestigationStatus
from vigil.integrations.slack.fake import SlackFake
from vigil.investigations.models import ChatCheckpoint, InvestigationStep
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition


def test_it_was_not_me_button_resumes_the_playbook_and_raises_the_case(chat_engine: Checkpointed) -> None:
    side = chat_engine.side
    alert = chat_engine.post_sign_in()
    asked = chat_engine.question()
    assert chat_engine.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS
    assert asked.conversation and alert["alert_id"] in json.dumps(asked.raw)
    assert side.answer_labels(asked) == ANSWER_LABELS

    chat_engine.press("denied", asked)
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert evidence["answer"] == "denied" and evidence["answered_via"] == "button"
    assert evidence["answered_by"] == ASKED and side.asked_id in evidence["answered_by_account"]
    assert (evidence["chat"], evidence["recipient_id"], evidence["conversation_id"]) == (
        side.integration_id,
        side.asked_id,
        asked.conversation,
    )
    assert isinstance(evidence["answered_at"], int) and evidence["message_updated"] is True
    case = chat_engine.case(done["case_id"])
    in_case = next(item for item in case["evidence"] if item["kind"] == "checkpoint")
    assert in_case["status"] == "ok" and in_case["output"]["answer"] == "denied"
    assert in_case["output"]["answered_by"] == ASKED
    assert case["verdict"] in ("malicious", "suspicious") and case["severity"] in ("medium", "high", "critical")
    assert any("answered that it was NOT them" in finding for finding in case["findings"])
    assert side.shows_outcome(asked, "denied")
    timeline = [event["kind"] for event in chat_engine.alert(alert["alert_id"])["timeline"]]
    assert "checkpoint_asked" in timeline and "checkpoint_answered" in timeline


def test_yes_reply_in_the_dm_confirms_and_lowers_an_uncontradicted_case(chat_engine: Checkpointed) -> None:
    alert = chat_engine.post_sign_in()
    asked = chat_engine.question()
    chat_engine.reply("Yes, that was me", asked)
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert evidence["answer"] == "confirmed" and evidence["answered_via"] == "dm"
    case = chat_engine.case(done["case_id"])
    assert case["verdict"] == "benign" and case["ai_disposition"] == "benign_true_positive"
    assert any("confirmed the activity was them" in finding for finding in case["findings"])
    assert chat_engine.side.shows_outcome(asked, "confirmed")


def test_unclear_replies_and_other_people_do_not_answer(chat_engine: Checkpointed) -> None:
    alert = chat_engine.post_sign_in()
    asked = chat_engine.question()
    chat_engine.reply("what is this about?", asked, event_id="EvUNCLEAR")
    chat_engine.press("confirmed", asked, user_id=OTHER_ID)
    time.sleep(1.0)
    assert chat_engine.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS
    with chat_engine.harness.db.read() as session:
        assert session.scalar(select(ChatCheckpoint.status)) == "waiting"

    chat_engine.press("denied", asked, nonce="2.2")
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    # A second press after the answer (and a late DM) change nothing.
    chat_engine.press("confirmed", asked, nonce="3.3")
    chat_engine.reply("yes", asked, event_id="EvLATE")
    time.sleep(0.5)
    with chat_engine.harness.db.read() as session:
        row = session.scalar(select(ChatCheckpoint))
        assert row is not None and (row.status, row.answer, row.answered_via) == ("answered", "denied", "button")
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answer"] == "denied"


def test_an_answer_not_signed_with_the_connections_secret_is_refused_and_changes_nothing(
    chat_engine: Checkpointed,
) -> None:
    alert = chat_engine.post_sign_in()
    asked = chat_engine.question()
    chat_engine.wait_until_asked()
    side = chat_engine.side
    side.press(asked, "denied", user_id=side.asked_id, nonce="4.4", secret="not-the-signing-secret", expect=401)
    time.sleep(0.5)
    row = checkpoint_row(chat_engine.harness)
    assert row is not None and (row.status, row.answer) == ("waiting", None)

    chat_engine.press("confirmed", asked, nonce="5.5")
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answer"] == "confirmed"


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
    asked = chat_engine.question()
    assert "198.51.100.9" in asked.text
    done = chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED, timeout=40)

    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert evidence["answer"] == "timeout" and evidence["answered_by"] is None
    case = chat_engine.case(done["case_id"])
    assert any("timed out" in finding for finding in case["findings"])
    assert chat_engine.side.shows_outcome(asked, "timeout")
    # An answer after the timeout is not taken.
    chat_engine.press("denied", asked)
    with chat_engine.harness.db.read() as session:
        assert session.scalar(select(ChatCheckpoint.answer)) == "timeout"


def test_no_checkpoint_is_drafted_before_the_slack_connection_is_authenticated(
    db_url: str, tmp_path: Path, slack_fake: SlackFake
) -> None:
    with Harness(
        engine_settings(db_url, tmp_path, vendor_urls=vendor_urls(slack=slack_fake.api_url)), engine=True
    ) as harness:
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


def test_user_unknown_to_the_chat_is_a_failed_step_not_a_stuck_alert(chat_engine: Checkpointed) -> None:
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
        assert step.error is not None and "nobody@acme.example" in step.error
        assert chat_engine.side.unknown_person_error in step.error


def test_checkpoint_survives_a_worker_restart_while_waiting(db_url: str, tmp_path: Path, slack_fake: SlackFake) -> None:
    settings = engine_settings(db_url, tmp_path, vendor_urls=vendor_urls(slack=slack_fake.api_url))
    with running(settings, SlackSide(slack_fake)) as first:
        alert = first.post_sign_in()
        first.question()
        first.wait_until_asked()
    # The worker (and the app with it) stopped while the question was open; a new one starts.
    with running(settings, SlackSide(slack_fake)) as again:
        asked = again.question()
        assert again.alert(alert["alert_id"])["investigation_status"] == InvestigationStatus.IN_PROGRESS
        again.press("denied", asked)
        again.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
        assert again.checkpoint_output(alert["alert_uuid"])["answer"] == "denied"
    assert len([m for m in slack_fake.messages.values() if buttons_of(m) or "not you" in m["text"]]) == 1
