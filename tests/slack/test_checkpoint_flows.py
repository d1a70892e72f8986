"""The Chat Checkpoint crash windows `investigations/flows.py` describes, each forced: an answer committed whose
wake-up never reached the waiting workflow; the ask step replayed after the "asked" record committed; and a
question sent but not recorded, whose waiting workflow was never started. Through the Slack fake and the tests'
second chat product; SQLite and PostgreSQL."""

from __future__ import annotations

import functools
import threading
import uuid

import pytest
from dbos import DBOS
from sqlalchemy import update

from tests.slack.checkpointing import SIGN_IN_TYPE, Checkpointed, checkpoint_row
from vigil.alerts.constants import InvestigationStatus
from vigil.integrations.chat import AnsweredVia, ChatDelivery, Decision, InboundAnswer
from vigil.investigations import flows, service, workflow
from vigil.investigations.models import ChatCheckpoint
from vigil.investigations.schemas import CheckpointAsk, InvestigationPlan, Progress
from vigil.investigations.steps import as_checkpoint
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition

ASK_THEN_ANALYZE = PlaybookDefinition(
    steps=[
        CheckpointStep(name="Ask the user", user_email="{{ entities.emails[0] }}", question="Was this you?"),
        AnalyzeStep(name="AI analysis"),
    ]
)


class UnreachableWaker:
    """A wake-up that never arrives (the process died after the commit, or DBOS's database was away)."""

    def __init__(self) -> None:
        self.tried: list[str] = []

    def send(self, workflow_id: str, checkpoint_uuid: uuid.UUID) -> None:
        self.tried.append(workflow_id)
        raise ConnectionError("DBOS system database unreachable")


def test_an_answer_committed_whose_wake_up_never_arrived_is_found_by_the_next_slice(
    chat_engine: Checkpointed, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workflow, "CHECKPOINT_SLICE_SECONDS", 1.0)  # the 15 s slice, shortened for the test
    alert = chat_engine.post_sign_in()
    chat_engine.question()
    chat_engine.wait_until_asked()
    row = checkpoint_row(chat_engine.harness)
    assert row is not None and row.connection_uuid and row.recipient_id and row.conversation_id
    answer = InboundAnswer(
        row.connection_uuid,
        Decision.DENIED,
        AnsweredVia.BUTTON,
        user_id=row.recipient_id,
        conversation_id=row.conversation_id,
        checkpoint_uuid=row.checkpoint_uuid,
    )
    waker = UnreachableWaker()

    delivery = flows.receive_chat_delivery(
        chat_engine.harness.db, waker, lambda _session: ChatDelivery.carrying(answer)
    )

    assert delivery.new and waker.tried == [row.waiting_workflow_id]  # committed, then the wake-up failed
    answered = checkpoint_row(chat_engine.harness)
    assert answered is not None and answered.status == "answered"
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED, timeout=30)
    evidence = chat_engine.checkpoint_output(alert["alert_uuid"])
    assert (evidence["answer"], evidence["answered_via"]) == ("denied", "button")


def _plan(alert_uuid: str) -> InvestigationPlan:
    """The plan the investigation's `vigil.begin` step recorded (its playbook was installed before the alert)."""
    begun = next(
        step["output"]
        for step in DBOS.list_workflow_steps(service.workflow_id_for(uuid.UUID(alert_uuid), 0))
        if step["function_name"] == "vigil.begin"
    )
    plan = service.Begun.model_validate_json(str(begun)).plan
    assert plan is not None
    return plan


def _replay_the_ask_step(chat: Checkpointed, alert_uuid: str) -> CheckpointAsk:
    """Run the recorded step `vigil.ask_checkpoint` again, as DBOS does when a process died inside it."""
    plan = _plan(alert_uuid)
    checkpoint = as_checkpoint(plan.definition.steps[0])
    assert checkpoint is not None
    return flows.ask_checkpoint(chat.harness.db, workflow.runtime().steps, plan, 0, checkpoint)


def test_an_ask_replayed_after_the_asked_record_sends_nothing_again(chat_engine: Checkpointed) -> None:
    chat_engine.use_playbook(SIGN_IN_TYPE, ASK_THEN_ANALYZE)
    alert = chat_engine.post_sign_in()
    asked = chat_engine.question()
    chat_engine.wait_until_asked()

    replayed = _replay_the_ask_step(chat_engine, alert["alert_uuid"])

    row = checkpoint_row(chat_engine.harness)
    assert row is not None and replayed.checkpoint_uuid == row.checkpoint_uuid and replayed.waiting
    assert replayed.record.output is not None and replayed.record.output["conversation_id"] == asked.conversation
    assert len(chat_engine.side.questions()) == 1  # the person was not asked again
    chat_engine.press("confirmed", asked)
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)


def test_a_question_sent_but_not_recorded_is_asked_again_and_its_wait_starts_once(
    chat_engine: Checkpointed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that died after sending the question, before the "asked" record (and so before the waiting
    workflow): the replayed step asks again rather than never, and the replayed hand-off starts one wait."""
    start_waiting, handed_over = workflow._start_waiting, threading.Event()
    monkeypatch.setattr(workflow, "_start_waiting", lambda *_args: handed_over.set())  # the process dies here
    chat_engine.use_playbook(SIGN_IN_TYPE, ASK_THEN_ANALYZE)
    alert = chat_engine.post_sign_in()
    chat_engine.question()
    assert handed_over.wait(30)
    with chat_engine.harness.db.write() as session:  # ... and had not recorded the question yet
        session.execute(update(ChatCheckpoint).values(status="asking"))

    replayed = _replay_the_ask_step(chat_engine, alert["alert_uuid"])

    again = chat_engine.question(count=2)
    row = checkpoint_row(chat_engine.harness)
    assert row is not None and row.status == "waiting" and row.conversation_id == again.conversation
    assert replayed.waiting and replayed.waiting_workflow_id == row.waiting_workflow_id
    plan_json = _plan(alert["alert_uuid"]).model_dump_json()
    for _ in range(2):  # the workflow replayed up to the hand-off, twice: one waiting workflow
        flows.wait_for_answer(lambda: replayed, functools.partial(start_waiting, plan_json, 0, Progress()))
    chat_engine.press("denied", again)
    chat_engine.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    assert chat_engine.checkpoint_output(alert["alert_uuid"])["answer"] == "denied"
    assert chat_engine.side.shows_outcome(again, "denied")
