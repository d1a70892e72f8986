"""Chat Checkpoints: the durable record of a question put to a person, and how answers reach it.

The flow: the engine opens a row (`asking`) with the timeout it resolved, sends the question through the
organization's chat provider, marks it `waiting` and starts a workflow that waits with `DBOS.recv`. A button
press or a yes/no reply from the asked person (read and verified by the provider's inbound route) is a
conditional update `waiting → answered` inside the transaction that records the delivery, then a wake-up message
to that workflow (`flows.receive_chat_delivery` commits and sends it; its module docstring tells what a crash
between the two leaves). The row is the truth; the message only saves waiting time: the waiting workflow also
re-reads the row between shorter waits, so a lost wake-up delays the playbook a little, never loses the answer.
A timeout is the same conditional update to `timed_out`, so whichever comes first wins.

The buttons are live as soon as the provider posts the question, before Vigil has recorded whom it asked. An
answer arriving in that window (row still `asking`) is kept in `chat_early_answers`; `mark_asked` applies the
asked person's answer in the same transaction that records the question, so the row goes straight to `answered`
and the wait ends at once. Both sides lock the checkpoint row (PostgreSQL; SQLite serializes writers anyway), so
an early answer is either seen by `mark_asked` or finds the row already `waiting`.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from vigil.alerts.service import add_timeline_event
from vigil.db.base import epoch_now
from vigil.durations import human_duration
from vigil.integrations.catalog import chat_provider
from vigil.integrations.chat import (
    AnsweredVia,
    ChatCheckpointOutput,
    Decision,
    InboundAnswer,
    SentQuestion,
    decode_message_ref,
    encode_message_ref,
)
from vigil.integrations.errors import UnknownIntegrationError
from vigil.investigations.models import ChatCheckpoint, ChatEarlyAnswer
from vigil.investigations.service import workflow_id_for
from vigil.orgs import service as orgs_service
from vigil.orgs.models import Organization

logger = logging.getLogger("vigil.checkpoints")

CHECKPOINT_TOPIC = "vigil.checkpoint"
TIMEOUT_ANSWER = "timeout"
# How long a yes/no DM reply that matched no open question is kept for a question still being recorded.
EARLY_REPLY_WINDOW_SECONDS = 300


class CheckpointStatus(StrEnum):
    ASKING = "asking"  # row exists, the question is being sent
    WAITING = "waiting"  # the question is in the person's DMs
    ANSWERED = "answered"
    TIMED_OUT = "timed_out"
    FAILED = "failed"  # the question could not be sent (unknown email, chat product error)


class TimeoutSource(StrEnum):
    """Where a checkpoint's timeout came from, in order of precedence."""

    STEP = "step"  # the playbook step's own timeout_seconds
    ORGANIZATION = "organization"  # the organization's override (console: organization page)
    SERVICE = "service"  # the service-wide setting (console: Settings)
    ENVIRONMENT = "environment"  # VIGIL_CHECKPOINT_TIMEOUT_SECONDS


@dataclass(frozen=True)
class Wake:
    """The wake-up an answer owes its waiting workflow, sent once the answer is committed."""

    workflow_id: str
    checkpoint_uuid: uuid.UUID


@dataclass(frozen=True)
class CheckpointTimeout:
    seconds: int
    source: TimeoutSource


def resolve_timeout(
    session: Session, organization_uuid: uuid.UUID, step_seconds: int | None, environment_seconds: int
) -> CheckpointTimeout:
    """The step's own timeout, else the organization's override, else the console's service-wide setting,
    else the environment's (`VIGIL_CHECKPOINT_TIMEOUT_SECONDS`)."""
    if step_seconds is not None:
        return CheckpointTimeout(step_seconds, TimeoutSource.STEP)
    organization = session.get(Organization, organization_uuid)
    if organization is not None and organization.checkpoint_timeout_seconds is not None:
        return CheckpointTimeout(organization.checkpoint_timeout_seconds, TimeoutSource.ORGANIZATION)
    seconds, source = orgs_service.default_checkpoint_timeout(session, environment_seconds)
    return CheckpointTimeout(seconds, TimeoutSource(source))


def recorded_timeout(row: ChatCheckpoint, resolved: CheckpointTimeout) -> CheckpointTimeout:
    """The timeout the row was opened with (a replayed ask keeps it even if a setting changed since)."""
    if row.timeout_seconds is None:  # a row opened before timeouts were recorded
        return resolved
    try:
        source = TimeoutSource(row.timeout_source or "")
    except ValueError:
        source = resolved.source
    return CheckpointTimeout(row.timeout_seconds, source)


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
    provider_id: str,
    email: str,
    question: str,
    timeout: CheckpointTimeout,
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
        provider_id=provider_id,
        waiting_workflow_id=waiting_workflow_id(alert_uuid, attempt, position),
        asked_email=email,
        question=question,
        status=CheckpointStatus.ASKING.value,
        created_at=epoch_now(),
        timeout_seconds=timeout.seconds,
        timeout_source=timeout.source.value,
    )
    session.add(row)
    session.flush()
    return row


def mark_asked(session: Session, checkpoint_uuid: uuid.UUID, sent: SentQuestion, timeout_seconds: int) -> None:
    """`asking → waiting` with whom and where the question was asked; an answer that arrived meanwhile is applied
    at once (the row ends `answered`, and the waiting workflow, started after this, finds it so)."""
    now = epoch_now()
    marked = session.execute(
        update(ChatCheckpoint)
        .where(
            ChatCheckpoint.checkpoint_uuid == checkpoint_uuid,
            ChatCheckpoint.status == CheckpointStatus.ASKING.value,
        )
        .values(
            status=CheckpointStatus.WAITING.value,
            recipient_id=sent.recipient_id,
            recipient_name=sent.recipient_name,
            conversation_id=sent.conversation_id,
            message_ref=encode_message_ref(sent.message_ref),
            posted_at=sent.posted_at,
            expires_at=now + timeout_seconds,
        )
    )
    row = session.get(ChatCheckpoint, checkpoint_uuid, populate_existing=True)
    if row is None or getattr(marked, "rowcount", 0) != 1:
        return
    _timeline(
        session,
        row,
        "checkpoint_asked",
        f"Asked {row.asked_email} in {chat_name(row.provider_id)} to confirm the activity; "
        f"waiting up to {human_duration(timeout_seconds)}.",
    )
    early = _take_early_answer(session, row)
    if early is None:
        return
    # Nobody waits yet: the waiting workflow starts after this and finds the row answered, so no wake-up.
    record_answer(session, row, early.decision, via=early.via, account=early.label, at=early.at)
    logger.info("checkpoint %s: the answer given while the question was being recorded applies", checkpoint_uuid)


def mark_failed(session: Session, checkpoint_uuid: uuid.UUID, reason: str) -> None:
    session.execute(
        update(ChatCheckpoint)
        .where(
            ChatCheckpoint.checkpoint_uuid == checkpoint_uuid,
            ChatCheckpoint.status == CheckpointStatus.ASKING.value,
        )
        .values(status=CheckpointStatus.FAILED.value)
    )
    session.execute(delete(ChatEarlyAnswer).where(ChatEarlyAnswer.checkpoint_uuid == checkpoint_uuid))
    row = session.get(ChatCheckpoint, checkpoint_uuid)
    if row is not None:
        where = chat_name(row.provider_id)
        _timeline(session, row, "checkpoint_failed", f"Could not ask {row.asked_email} in {where}: {reason}")


def is_waiting(session: Session, checkpoint_uuid: uuid.UUID) -> bool:
    status = session.scalar(select(ChatCheckpoint.status).where(ChatCheckpoint.checkpoint_uuid == checkpoint_uuid))
    return status == CheckpointStatus.WAITING.value


def get(session: Session, checkpoint_uuid: uuid.UUID) -> ChatCheckpoint:
    """The row as the database has it now (another transaction may have answered it)."""
    row = session.get(ChatCheckpoint, checkpoint_uuid, populate_existing=True)
    if row is None:
        raise LookupError(f"checkpoint {checkpoint_uuid} disappeared")
    return row


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
    row = get(session, checkpoint_uuid)
    if getattr(timed_out, "rowcount", 0) == 1:
        _timeline(session, row, "checkpoint_timeout", f"No answer from {row.asked_email} in time; continuing.")
    return row


def evidence(row: ChatCheckpoint) -> dict[str, Any]:
    """The step's recorded output: whom the question went to, and the answer once there is one."""
    answered = row.status == CheckpointStatus.ANSWERED.value
    return ChatCheckpointOutput(
        answer=row.answer or "pending",
        answered_by=row.asked_email if answered else None,
        answered_by_account=row.answered_by_account if answered else None,
        answered_at=row.answered_at,
        answered_via=row.answered_via,
        asked_user_email=row.asked_email,
        chat=row.provider_id,
        recipient_id=row.recipient_id or "",
        recipient_name=row.recipient_name,
        conversation_id=row.conversation_id or "",
        message_ref=decode_message_ref(row.message_ref),
        question=row.question,
    ).model_dump(mode="json")


def chat_name(provider_id: str) -> str:
    """The chat product's name for texts people read; its id if it is no longer installed."""
    try:
        return chat_provider(provider_id).name
    except UnknownIntegrationError:
        return provider_id


# --- answers from chat ------------------------------------------------------------------------------------------


def record_answer(
    session: Session,
    row: ChatCheckpoint,
    decision: Decision,
    *,
    via: AnsweredVia,
    account: str,
    at: int | None = None,
) -> Wake | None:
    """`waiting → answered` once; returns the wake-up to send after commit, or None if it was already resolved."""
    now = epoch_now() if at is None else at
    result = session.execute(
        update(ChatCheckpoint)
        .where(
            ChatCheckpoint.checkpoint_uuid == row.checkpoint_uuid,
            ChatCheckpoint.status == CheckpointStatus.WAITING.value,
        )
        .values(
            status=CheckpointStatus.ANSWERED.value,
            answer=decision.value,
            answered_by_account=account[:200],
            answered_via=via.value,
            answered_at=now,
        )
    )
    if getattr(result, "rowcount", 0) != 1:
        logger.info("checkpoint %s already resolved; answer %s ignored", row.checkpoint_uuid, decision.value)
        return None
    said = "it was them" if decision is Decision.CONFIRMED else "it was NOT them"
    where = chat_name(row.provider_id)
    _timeline(session, row, "checkpoint_answered", f"{row.asked_email} answered in {where} ({via.value}): {said}.")
    logger.info("checkpoint %s answered %s via %s", row.checkpoint_uuid, decision.value, via.value)
    return Wake(row.waiting_workflow_id, row.checkpoint_uuid)


def on_answer(session: Session, answer: InboundAnswer) -> Wake | None:
    """A verified answer from any chat provider: a press names its checkpoint, a written reply does not."""
    if not answer.user_id:
        return None
    if answer.checkpoint_uuid is not None:
        return _on_press(session, answer, answer.checkpoint_uuid)
    return _on_reply(session, answer)


def _on_press(session: Session, answer: InboundAnswer, checkpoint_uuid: uuid.UUID) -> Wake | None:
    """Only on this connection's checkpoint, and only by the asked person.

    A press while the question is still being recorded (`asking`) is kept for `mark_asked`, which knows who
    was asked; the row lock makes `mark_asked` wait for this transaction (or this one see its result)."""
    row = session.get(ChatCheckpoint, checkpoint_uuid, with_for_update=True, populate_existing=True)
    if row is None or row.connection_uuid != answer.connection_uuid:
        logger.warning("answer for unknown checkpoint %s on connection %s", checkpoint_uuid, answer.connection_uuid)
        return None
    label = _label(answer.user_name or "", answer.user_id)
    if row.status == CheckpointStatus.ASKING.value:
        session.add(
            ChatEarlyAnswer(
                connection_uuid=answer.connection_uuid,
                checkpoint_uuid=row.checkpoint_uuid,
                answered_via=answer.via.value,
                answer=answer.decision.value,
                user_id=answer.user_id[:255],
                user_label=label[:200],
                conversation_id=answer.conversation_id[:255],
                received_at=epoch_now(),
            )
        )
        logger.info(
            "checkpoint %s: press by %s while the question is being recorded; kept until it is",
            row.checkpoint_uuid,
            answer.user_id,
        )
        return None
    if answer.user_id != row.recipient_id:
        _ignore_other_user(row, answer.user_id)
        return None
    return record_answer(session, row, answer.decision, via=answer.via, account=label)


def _on_reply(session: Session, answer: InboundAnswer) -> Wake | None:
    """A clear yes/no from the asked person answers their most recent open question in that conversation.

    A reply no waiting question matches, while a question of this connection is still being recorded, is kept
    a few minutes for `mark_asked` (locking those rows first, so `mark_asked` either sees the reply or has
    already made its row `waiting`, which the lookup below then finds)."""
    being_asked = session.scalars(
        select(ChatCheckpoint.checkpoint_uuid)
        .where(
            ChatCheckpoint.connection_uuid == answer.connection_uuid,
            ChatCheckpoint.status == CheckpointStatus.ASKING.value,
        )
        .order_by(ChatCheckpoint.checkpoint_uuid)
        .with_for_update()
    ).all()
    row = session.scalar(
        select(ChatCheckpoint)
        .where(
            ChatCheckpoint.connection_uuid == answer.connection_uuid,
            ChatCheckpoint.recipient_id == answer.user_id,
            ChatCheckpoint.conversation_id == answer.conversation_id,
            ChatCheckpoint.status == CheckpointStatus.WAITING.value,
        )
        .order_by(ChatCheckpoint.created_at.desc())
        .limit(1)
    )
    if row is not None:
        account = _label(row.recipient_name or "", answer.user_id)
        return record_answer(session, row, answer.decision, via=answer.via, account=account)
    if being_asked:
        now = epoch_now()
        session.execute(
            delete(ChatEarlyAnswer).where(
                ChatEarlyAnswer.connection_uuid == answer.connection_uuid,
                ChatEarlyAnswer.checkpoint_uuid.is_(None),
                ChatEarlyAnswer.received_at < now - EARLY_REPLY_WINDOW_SECONDS,
            )
        )
        session.add(
            ChatEarlyAnswer(
                connection_uuid=answer.connection_uuid,
                checkpoint_uuid=None,
                answered_via=answer.via.value,
                answer=answer.decision.value,
                user_id=answer.user_id[:255],
                user_label=answer.user_id[:200],
                conversation_id=answer.conversation_id[:255],
                posted_at=(answer.posted_at or "")[:64],
                received_at=now,
            )
        )
        logger.info("reply by %s while a question is being recorded; kept for it", answer.user_id)
    return None


@dataclass(frozen=True)
class _EarlyAnswer:
    decision: Decision
    via: AnsweredVia
    label: str
    at: int


def _take_early_answer(session: Session, row: ChatCheckpoint) -> _EarlyAnswer | None:
    """The asked person's first press on this question, else their newest reply posted after it; other
    people's presses are discarded as they would have been once the question was recorded."""
    chosen: _EarlyAnswer | None = None
    presses = session.scalars(
        select(ChatEarlyAnswer)
        .where(ChatEarlyAnswer.checkpoint_uuid == row.checkpoint_uuid)
        .order_by(ChatEarlyAnswer.id)
    ).all()
    for press in presses:
        if press.user_id != row.recipient_id:
            _ignore_other_user(row, press.user_id)
        elif chosen is None:
            chosen = _EarlyAnswer(
                Decision(press.answer), AnsweredVia(press.answered_via), press.user_label, press.received_at
            )
    if presses:
        session.execute(delete(ChatEarlyAnswer).where(ChatEarlyAnswer.checkpoint_uuid == row.checkpoint_uuid))
    return chosen or _take_early_reply(session, row)


def _take_early_reply(session: Session, row: ChatCheckpoint) -> _EarlyAnswer | None:
    """The newest kept yes/no reply of the asked person in the question's conversation, posted after the
    question; taken by one question only (a conditional delete)."""
    if not row.recipient_id or not row.conversation_id:
        return None
    replies = session.scalars(
        select(ChatEarlyAnswer).where(
            ChatEarlyAnswer.connection_uuid == row.connection_uuid,
            ChatEarlyAnswer.checkpoint_uuid.is_(None),
            ChatEarlyAnswer.user_id == row.recipient_id,
            ChatEarlyAnswer.conversation_id == row.conversation_id,
            ChatEarlyAnswer.received_at >= epoch_now() - EARLY_REPLY_WINDOW_SECONDS,
        )
    ).all()
    asked_at = _exact_time(row.posted_at)
    for reply in sorted(replies, key=lambda r: _exact_time(r.posted_at), reverse=True):
        if _exact_time(reply.posted_at) <= asked_at:
            break
        early = _EarlyAnswer(
            Decision(reply.answer),
            AnsweredVia(reply.answered_via),
            _label(row.recipient_name or "", reply.user_id),
            reply.received_at,
        )
        taken = session.execute(delete(ChatEarlyAnswer).where(ChatEarlyAnswer.id == reply.id))
        if getattr(taken, "rowcount", 0) == 1:
            return early
    return None


def _ignore_other_user(row: ChatCheckpoint, user_id: str) -> None:
    logger.warning(
        "checkpoint %s: press by %s ignored; only the asked person %s may answer",
        row.checkpoint_uuid,
        user_id,
        row.recipient_id,
    )


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


# --- helpers ------------------------------------------------------------------------------------------------


def _exact_time(value: str | None) -> Decimal:
    """Providers' posting times ("1795291351.974779") compared exactly; anything else sorts first."""
    try:
        parsed = Decimal(value or "0")
    except InvalidOperation:
        return Decimal(0)
    return parsed if parsed.is_finite() else Decimal(0)


def _label(name: str, user_id: str) -> str:
    return f"{name} ({user_id})" if name else user_id


def _timeline(session: Session, row: ChatCheckpoint, kind: str, message: str) -> None:
    add_timeline_event(session, row.alert_uuid, actor="vigil:checkpoint", kind=kind, message=message)
