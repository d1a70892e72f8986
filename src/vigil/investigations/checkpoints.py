"""Chat Checkpoints: the durable record of a question put to a person, and how answers reach it.

The flow: the engine opens a row (`asking`), sends the Slack question, marks it `waiting` and starts a
workflow that waits with `DBOS.recv`. A button press (E5) or a yes/no DM reply (E4) from the asked user is
a conditional update `waiting → answered` inside the transaction that records the delivery, then a wake-up
message to that workflow. The row is the truth; the message only saves waiting time: the waiting workflow
also re-reads the row between shorter waits, so a lost wake-up delays the playbook a little, never loses
the answer. A timeout is the same conditional update to `timed_out`, so whichever comes first wins.
"""

from __future__ import annotations

import logging
import threading
import uuid
from enum import StrEnum
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from vigil.alerts.service import add_timeline_event
from vigil.db.base import epoch_now
from vigil.integrations.slack import inbound
from vigil.integrations.slack.checkpoint import CheckpointButton, Decision, decision_from_reply
from vigil.integrations.slack.skills import ChatCheckpointOutput
from vigil.investigations.models import ChatCheckpoint
from vigil.investigations.service import workflow_id_for

logger = logging.getLogger("vigil.checkpoints")

CHECKPOINT_TOPIC = "vigil.checkpoint"
TIMEOUT_ANSWER = "timeout"


class CheckpointStatus(StrEnum):
    ASKING = "asking"  # row exists, the question is being sent
    WAITING = "waiting"  # the question is in the person's DMs
    ANSWERED = "answered"
    TIMED_OUT = "timed_out"
    FAILED = "failed"  # the question could not be sent (unknown email, Slack error)


class AnsweredVia(StrEnum):
    BUTTON = "button"
    DM = "dm"


def waiting_workflow_id(alert_uuid: uuid.UUID, attempt: int, position: int) -> str:
    """The workflow that waits for this checkpoint: derived from the attempt, so starting it twice is harmless."""
    return f"{workflow_id_for(alert_uuid, attempt)}:checkpoint-{position}"


def open_checkpoint(
    session: Session,
    *,
    alert_uuid: uuid.UUID,
    attempt: int,
    position: int,
    organization_uuid: uuid.UUID,
    connection_uuid: uuid.UUID,
    connection_name: str,
    email: str,
    question: str,
) -> ChatCheckpoint:
    """The checkpoint of this step, created once; a replayed step gets the same row back."""
    existing = session.scalar(
        select(ChatCheckpoint).where(
            ChatCheckpoint.alert_uuid == alert_uuid,
            ChatCheckpoint.attempt == attempt,
            ChatCheckpoint.position == position,
        )
    )
    if existing is not None:
        return existing
    row = ChatCheckpoint(
        checkpoint_uuid=uuid.uuid4(),
        alert_uuid=alert_uuid,
        attempt=attempt,
        position=position,
        organization_uuid=organization_uuid,
        connection_uuid=connection_uuid,
        connection_name=connection_name,
        waiting_workflow_id=waiting_workflow_id(alert_uuid, attempt, position),
        asked_email=email,
        question=question,
        status=CheckpointStatus.ASKING.value,
        created_at=epoch_now(),
    )
    session.add(row)
    session.flush()
    return row


def mark_asked(session: Session, checkpoint_uuid: uuid.UUID, asked: ChatCheckpointOutput, timeout_seconds: int) -> None:
    now = epoch_now()
    session.execute(
        update(ChatCheckpoint)
        .where(
            ChatCheckpoint.checkpoint_uuid == checkpoint_uuid,
            ChatCheckpoint.status == CheckpointStatus.ASKING.value,
        )
        .values(
            status=CheckpointStatus.WAITING.value,
            slack_user_id=asked.slack_user_id,
            slack_user_name=asked.slack_user_name,
            channel_id=asked.channel,
            message_ts=asked.message_ts,
            expires_at=now + timeout_seconds,
        )
    )
    row = session.get(ChatCheckpoint, checkpoint_uuid)
    if row is not None:
        _timeline(
            session,
            row,
            "checkpoint_asked",
            f"Asked {row.asked_email} in Slack to confirm the activity; waiting up to {_duration(timeout_seconds)}.",
        )


def mark_failed(session: Session, checkpoint_uuid: uuid.UUID, reason: str) -> None:
    session.execute(
        update(ChatCheckpoint)
        .where(
            ChatCheckpoint.checkpoint_uuid == checkpoint_uuid,
            ChatCheckpoint.status == CheckpointStatus.ASKING.value,
        )
        .values(status=CheckpointStatus.FAILED.value)
    )
    row = session.get(ChatCheckpoint, checkpoint_uuid)
    if row is not None:
        _timeline(session, row, "checkpoint_failed", f"Could not ask {row.asked_email} in Slack: {reason}")


def is_waiting(session: Session, checkpoint_uuid: uuid.UUID) -> bool:
    status = session.scalar(select(ChatCheckpoint.status).where(ChatCheckpoint.checkpoint_uuid == checkpoint_uuid))
    return status == CheckpointStatus.WAITING.value


def conclude(session: Session, checkpoint_uuid: uuid.UUID) -> ChatCheckpoint:
    """Close the wait: still `waiting` means nobody answered in time; an answer already recorded stands."""
    timed_out = session.execute(
        update(ChatCheckpoint)
        .where(
            ChatCheckpoint.checkpoint_uuid == checkpoint_uuid,
            ChatCheckpoint.status == CheckpointStatus.WAITING.value,
        )
        .values(status=CheckpointStatus.TIMED_OUT.value, answer=TIMEOUT_ANSWER, answered_at=epoch_now())
    )
    row = session.get(ChatCheckpoint, checkpoint_uuid)
    if row is None:
        raise LookupError(f"checkpoint {checkpoint_uuid} disappeared")
    session.refresh(row)
    if getattr(timed_out, "rowcount", 0) == 1:
        _timeline(session, row, "checkpoint_timeout", f"No answer from {row.asked_email} in time; continuing.")
    return row


def evidence(row: ChatCheckpoint) -> dict[str, Any]:
    """The step's recorded output: the skill's output model with the answer filled in."""
    answered = row.status == CheckpointStatus.ANSWERED.value
    return ChatCheckpointOutput(
        answer=row.answer or "pending",
        answered_by=row.asked_email if answered else None,
        answered_by_slack=row.answered_by_slack if answered else None,
        answered_at=row.answered_at,
        answered_via=row.answered_via,
        asked_user_email=row.asked_email,
        slack_user_id=row.slack_user_id or "",
        slack_user_name=row.slack_user_name,
        channel=row.channel_id or "",
        message_ts=row.message_ts or "",
        question=row.question,
    ).model_dump(mode="json")


# --- answers from Slack -------------------------------------------------------------------------------------


def record_answer(
    session: Session,
    row: ChatCheckpoint,
    decision: Decision,
    *,
    via: AnsweredVia,
    slack_user: str,
) -> inbound.AfterCommit | None:
    """`waiting → answered` once; returns the wake-up to send after commit, or None if it was already resolved."""
    now = epoch_now()
    result = session.execute(
        update(ChatCheckpoint)
        .where(
            ChatCheckpoint.checkpoint_uuid == row.checkpoint_uuid,
            ChatCheckpoint.status == CheckpointStatus.WAITING.value,
        )
        .values(
            status=CheckpointStatus.ANSWERED.value,
            answer=decision.value,
            answered_by_slack=slack_user[:200],
            answered_via=via.value,
            answered_at=now,
        )
    )
    if getattr(result, "rowcount", 0) != 1:
        logger.info("checkpoint %s already resolved; answer %s ignored", row.checkpoint_uuid, decision.value)
        return None
    said = "it was them" if decision is Decision.CONFIRMED else "it was NOT them"
    _timeline(session, row, "checkpoint_answered", f"{row.asked_email} answered in Slack ({via.value}): {said}.")
    logger.info("checkpoint %s answered %s via %s", row.checkpoint_uuid, decision.value, via.value)
    workflow_id, checkpoint_uuid = row.waiting_workflow_id, row.checkpoint_uuid
    return lambda: wake(workflow_id, checkpoint_uuid)


def on_button(session: Session, interaction: inbound.InboundInteraction) -> inbound.AfterCommit | None:
    """E5 block_actions: only our buttons, on this connection's checkpoint, pressed by the asked user."""
    button = CheckpointButton.parse(interaction.action_value)
    if button is None:
        return None
    row = session.get(ChatCheckpoint, button.checkpoint)
    if row is None or row.connection_uuid != interaction.connection_uuid:
        logger.warning(
            "button for unknown checkpoint %s on connection %s", button.checkpoint, interaction.connection_uuid
        )
        return None
    if interaction.user_id != row.slack_user_id:
        logger.warning(
            "checkpoint %s: press by %s ignored; only the asked user %s may answer",
            row.checkpoint_uuid,
            interaction.user_id,
            row.slack_user_id,
        )
        return None
    user = interaction.payload.get("user")
    name = str(user.get("username") or user.get("name") or "") if isinstance(user, dict) else ""
    return record_answer(
        session, row, button.decision, via=AnsweredVia.BUTTON, slack_user=_slack_label(name, interaction.user_id)
    )


def on_direct_message(session: Session, event: inbound.InboundEvent) -> inbound.AfterCommit | None:
    """E4 message.im: a clear yes/no from the asked user answers their most recent open question in that DM."""
    user_id = str(event.event.get("user") or "")
    channel_id = str(event.event.get("channel") or "")
    decision = decision_from_reply(str(event.event.get("text") or ""))
    if not user_id or decision is None:
        return None
    row = session.scalar(
        select(ChatCheckpoint)
        .where(
            ChatCheckpoint.connection_uuid == event.connection_uuid,
            ChatCheckpoint.slack_user_id == user_id,
            ChatCheckpoint.channel_id == channel_id,
            ChatCheckpoint.status == CheckpointStatus.WAITING.value,
        )
        .order_by(ChatCheckpoint.created_at.desc())
        .limit(1)
    )
    if row is None:
        return None
    return record_answer(
        session, row, decision, via=AnsweredVia.DM, slack_user=_slack_label(row.slack_user_name or "", user_id)
    )


inbound.register_interaction_handler("block_actions", on_button)
inbound.register_event_handler("message.im", on_direct_message)


# --- waking the waiting workflow ----------------------------------------------------------------------------


class WorkflowWaker:
    """Sends the wake-up through DBOS's client, so any API process can reach a workflow waiting in any worker."""

    def __init__(self, system_database_url: str) -> None:
        self._url = system_database_url
        self._client: Any = None
        self._lock = threading.Lock()

    def send(self, workflow_id: str, checkpoint_uuid: uuid.UUID) -> None:
        from dbos import DBOSClient

        with self._lock:
            if self._client is None:
                self._client = DBOSClient(system_database_url=self._url)
            client = self._client
        # One wake-up per checkpoint, however many times a delivery is retried.
        client.send(workflow_id, str(checkpoint_uuid), topic=CHECKPOINT_TOPIC, idempotency_key=f"cp-{checkpoint_uuid}")

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.destroy()
                self._client = None


_waker: WorkflowWaker | None = None


def install_waker(waker: WorkflowWaker | None) -> None:
    global _waker  # noqa: PLW0603 - inbound handlers are module-level; the app installs how they wake workflows
    _waker = waker


def uninstall_waker(waker: WorkflowWaker) -> None:
    """Remove `waker` if it is still the installed one (another app in this process may have replaced it)."""
    if _waker is waker:
        install_waker(None)


def wake(workflow_id: str, checkpoint_uuid: uuid.UUID) -> None:
    if _waker is None:
        logger.warning("no workflow waker installed; checkpoint %s is picked up by its next poll", checkpoint_uuid)
        return
    _waker.send(workflow_id, checkpoint_uuid)


# --- helpers ------------------------------------------------------------------------------------------------


def _slack_label(name: str, user_id: str) -> str:
    return f"{name} ({user_id})" if name else user_id


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def _timeline(session: Session, row: ChatCheckpoint, kind: str, message: str) -> None:
    add_timeline_event(session, row.alert_uuid, actor="vigil:checkpoint", kind=kind, message=message)
