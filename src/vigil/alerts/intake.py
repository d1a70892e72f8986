"""Alert intake by group commit: concurrent E1 and batch requests share one short write transaction.

Every alert needs the next number of its (organization, provider) counter in the transaction that stores it,
so per-request transactions queue on that counter row and the server runs at the speed of one commit at a
time. Instead, requests hand their alerts to one writer thread per process, which takes everything waiting,
bumps each counter once by the number of alerts it numbers, inserts all rows with multi-row statements and
commits once. A request returns only after that commit (201 still means durable); numbering stays gap-free
because the counters move in the same transaction as the rows they number. If a group fails as a whole
(say one alert trips a database constraint), each submission is retried alone so only the culprit fails.
On SQLite the writer is also how intake queues in process instead of contending on the file lock.

A request waits for its alerts at most `db_request_timeout_seconds`, then gets a 503 with Retry-After: alerts the
writer had not taken yet are never stored; a group already being written may still commit (docs/intake.md).
"""

from __future__ import annotations

import hashlib
import logging
import os
import queue
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Table, delete, select, tuple_
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert, AlertCounter, AlertEvent, IdempotencyRecord
from vigil.alerts.schemas import AlertCreate, AlertOut, BatchItemResult, ErrorBody
from vigil.auth.known_keys import KnownKeys
from vigil.auth.schemas import Principal
from vigil.auth.service import current_principals
from vigil.db.base import Base, epoch_now
from vigil.db.bulk import insert_rows
from vigil.db.deadlines import Deadlines
from vigil.db.session import Database
from vigil.db.upsert import increment_counter
from vigil.errors import Conflict, DatabaseUnavailable, PayloadTooLarge, ValidationFailed, VigilError, field_errors
from vigil.orgs.models import Organization, Provider
from vigil.orgs.service import authorize_organization, get_enabled_provider, get_organization_by_code

logger = logging.getLogger("vigil.intake")

#: Alerts written per transaction at most: large enough to absorb a burst, small enough to commit in
#: milliseconds (two full batch requests).
MAX_GROUP_ALERTS = 1000


@dataclass(frozen=True)
class IntakeLimits:
    max_content_bytes: int
    idempotency_ttl_seconds: int


@dataclass(frozen=True)
class Stored:
    """One alert's answer: the record, and whether this request created it (False: an idempotent replay)."""

    alert: AlertOut
    created: bool


Outcome = Stored | VigilError


@dataclass
class _Entry:
    """One alert of a submission, and what became of it."""

    payload: AlertCreate
    idempotency_key: str | None = None
    request_hash: str = ""
    outcome: Outcome | None = None
    replay_of: _Entry | None = None  # a same-key twin earlier in the group: answer with its alert


@dataclass
class _Submission:
    principal: Principal
    entries: list[_Entry]
    done: Future[list[Outcome]] = field(default_factory=Future)


class IntakeWriter:
    """The process's one intake writer thread, started on first use and stopped by `close`."""

    def __init__(self, db: Database, known_keys: KnownKeys, limits: IntakeLimits) -> None:
        self.db = db
        self.known_keys = known_keys
        self.limits = limits
        self._queue: queue.SimpleQueue[_Submission | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._deadlines = Deadlines(db.settings.db_request_timeout_seconds, "vigil-intake-deadlines")

    def create(self, principal: Principal, payload: AlertCreate, idempotency_key: str | None = None) -> Future[Stored]:
        """E1: store one alert; a replayed idempotency key answers with the first alert (created=False)."""
        entry = _Entry(payload, idempotency_key)
        if idempotency_key is not None:
            entry.request_hash = hashlib.sha256(payload.model_dump_json().encode()).hexdigest()
        single: Future[Stored] = Future()

        def unwrap(done: Future[list[Outcome]]) -> None:
            if done.cancelled():  # the deadline passed first and has answered
                return
            error = done.exception()
            outcome = error if error is not None else done.result()[0]
            _settle(single, outcome)

        self._submit(principal, [entry], single).add_done_callback(unwrap)
        return single

    def create_batch(self, principal: Principal, items: Sequence[dict[str, Any]]) -> Future[list[BatchItemResult]]:
        """Many alerts in one request; each item succeeds or fails on its own merits."""
        results: list[BatchItemResult | None] = []
        entries: list[_Entry] = []
        positions: list[int] = []
        for index, raw in enumerate(items):
            try:
                payload = AlertCreate.model_validate(raw)
            except ValidationError as error:
                failure = ValidationFailed(
                    "The alert is not valid.", details=field_errors(error.errors(include_url=False))
                )
                results.append(_failed_item(index, failure))
                continue
            results.append(None)
            entries.append(_Entry(payload))
            positions.append(index)
        answer: Future[list[BatchItemResult]] = Future()

        def merge(done: Future[list[Outcome]]) -> None:
            if done.cancelled():  # the deadline passed first and has answered
                return
            error = done.exception()
            if error is not None:
                _settle(answer, error)
                return
            for index, outcome in zip(positions, done.result(), strict=True):
                results[index] = (
                    _failed_item(index, outcome)
                    if isinstance(outcome, VigilError)
                    else BatchItemResult(index=index, status=201, alert=outcome.alert)
                )
            _settle(answer, [r for r in results if r is not None])

        if entries:
            self._submit(principal, entries, answer).add_done_callback(merge)
        else:
            answer.set_result([r for r in results if r is not None])
        return answer

    def close(self) -> None:
        """Finish what was submitted, then stop the thread."""
        with self._lock:
            self._closed = True
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout=30)
        self._deadlines.close()

    # -- the writer thread -----------------------------------------------------------------------

    def _submit(self, principal: Principal, entries: list[_Entry], answer: Future[Any]) -> Future[list[Outcome]]:
        """Queue the entries for the writer; `answer` (the caller's future) fails with a 503 at the deadline."""
        submission = _Submission(principal, entries)
        with self._lock:
            if self._closed:
                raise DatabaseUnavailable("Vigil is shutting down; retry shortly.")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="vigil-intake", daemon=True)
                self._thread.start()
            self._queue.put(submission)
        self._deadlines.arm(lambda: _expire(submission, answer, self._deadlines.delay))
        return submission.done

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            group, size = [first], len(first.entries)
            stopping = False
            while size < MAX_GROUP_ALERTS:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stopping = True
                    break
                group.append(more)
                size += len(more.entries)
            # Claim each submission: one whose deadline passed while it queued is dropped, never stored.
            group = [submission for submission in group if submission.done.set_running_or_notify_cancel()]
            if group:
                self._write(group)
            if stopping:
                return

    def _write(self, group: list[_Submission]) -> None:
        try:
            self._store(group)
        except DBAPIError:
            # Something broke the whole transaction: retry each submission on its own, so only the culprit fails
            # (and a key that raced in from another process is answered as a replay).
            if len(group) > 1:
                logger.warning("intake group of %d submissions failed; retrying each alone", len(group))
            for submission in group:
                self._store_or_fail([submission])
        except Exception as error:
            _fail(group, error)

    def _store_or_fail(self, group: list[_Submission]) -> None:
        """Last try; a concurrent same-key request from another process makes the first try a replay now."""
        for entry in (e for s in group for e in s.entries):
            entry.outcome, entry.replay_of = None, None
        try:
            self._store(group)
        except Exception as error:
            _fail(group, error)

    def _store(self, group: list[_Submission]) -> None:
        with self.db.write() as session:
            refused = _store_group(session, group, self.limits)
        self.known_keys.forget(refused)
        for submission in group:
            submission.done.set_result([_final(entry) for entry in submission.entries])


def _expire(submission: _Submission, answer: Future[Any], waited: float) -> None:
    """The caller's deadline: a 503 now, whether the writer never took its alerts or is still writing them."""
    if answer.done():
        return
    if submission.done.cancel():
        message = f"The database did not take the alert within {waited:g} s; it was not stored. Retry shortly."
    else:
        message = (
            f"The database did not confirm the alert within {waited:g} s; it may still be stored. "
            "Retry with the same Idempotency-Key to avoid a duplicate."
        )
    _settle(answer, DatabaseUnavailable(message))


def _settle(future: Future[Any], outcome: Any) -> None:
    """Complete `future` with a result or an exception, unless the deadline (or the writer) got there first."""
    try:
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
    except InvalidStateError:
        pass


def _fail(group: list[_Submission], error: Exception) -> None:
    if not isinstance(error, VigilError):
        logger.error("intake write failed: %s", type(error).__name__, exc_info=error)
    for submission in group:
        if not submission.done.done():
            submission.done.set_exception(error)


def _final(entry: _Entry) -> Outcome:
    if entry.replay_of is not None:
        first = _final(entry.replay_of)
        return Stored(first.alert, created=False) if isinstance(first, Stored) else first
    assert entry.outcome is not None, "every entry is answered before the commit returns"
    return entry.outcome


@dataclass
class _Targets:
    """Organization/provider lookups memoised for one group (a group names the same few many times)."""

    session: Session
    organizations: dict[str, Organization | None] = field(default_factory=dict)
    providers: dict[str, Provider | None] = field(default_factory=dict)

    def organization(self, code: str) -> Organization | None:
        if code not in self.organizations:
            self.organizations[code] = get_organization_by_code(self.session, code)
        return self.organizations[code]

    def provider(self, slug: str) -> Provider | None:
        if slug not in self.providers:
            self.providers[slug] = get_enabled_provider(self.session, slug)
        return self.providers[slug]


def _store_group(session: Session, group: list[_Submission], limits: IntakeLimits) -> set[uuid.UUID]:
    """Answer every entry of the group inside one transaction: replays, refusals and new alerts.

    Returns the API keys refused now (revoked, expired or deleted since the request path recognised them).
    """
    refused = _check_callers(session, group)
    group = [s for s in group if s.principal.actor_uuid not in refused]
    targets = _Targets(session)
    now = epoch_now()
    records = _idempotency_records(session, group)
    claimed: dict[tuple[uuid.UUID, str], _Entry] = {}
    expired: list[int] = []
    replayed: dict[uuid.UUID, list[_Entry]] = {}
    accepted: list[tuple[_Submission, _Entry, Organization]] = []
    for submission in group:
        principal = submission.principal
        for entry in submission.entries:
            key = entry.idempotency_key
            if key is not None:
                scope = (principal.actor_uuid, key)
                twin = claimed.get(scope)
                if twin is not None:
                    if twin.request_hash != entry.request_hash:
                        entry.outcome = _key_conflict()
                    else:
                        entry.replay_of = twin
                    continue
                record = records.get(scope)
                if record is not None and record.created_at <= now - limits.idempotency_ttl_seconds:
                    expired.append(record.id)
                elif record is not None:
                    if record.request_hash != entry.request_hash:
                        entry.outcome = _key_conflict()
                    else:
                        replayed.setdefault(record.alert_uuid, []).append(entry)
                    continue
            try:
                organization = _authorize(principal, entry.payload, limits, targets)
            except VigilError as error:
                entry.outcome = error
                continue
            if key is not None:
                claimed[(principal.actor_uuid, key)] = entry
            accepted.append((submission, entry, organization))
    if expired:
        session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.id.in_(expired)))
    if replayed:  # an idempotency record goes with its alert (ON DELETE CASCADE), so the alert exists
        for alert in session.scalars(select(Alert).where(Alert.alert_uuid.in_(list(replayed)))):
            for entry in replayed[alert.alert_uuid]:
                entry.outcome = Stored(AlertOut.model_validate(alert), created=False)
    if accepted:
        _insert(session, accepted, now)
    return refused


def _check_callers(session: Session, group: list[_Submission]) -> set[uuid.UUID]:
    """Each submission's key as of this transaction: its current principal, or a 401 for all its alerts."""
    current = current_principals(session, {s.principal.actor_uuid for s in group})
    refused: set[uuid.UUID] = set()
    for submission in group:
        checked = current[submission.principal.actor_uuid]
        if isinstance(checked, Principal):
            submission.principal = checked
            continue
        refused.add(submission.principal.actor_uuid)
        for entry in submission.entries:
            entry.outcome = checked
    return refused


def _idempotency_records(session: Session, group: list[_Submission]) -> dict[tuple[uuid.UUID, str], Any]:
    scopes = {(s.principal.actor_uuid, e.idempotency_key) for s in group for e in s.entries if e.idempotency_key}
    if not scopes:
        return {}
    rows = session.execute(
        select(
            IdempotencyRecord.id,
            IdempotencyRecord.api_key_uuid,
            IdempotencyRecord.idempotency_key,
            IdempotencyRecord.request_hash,
            IdempotencyRecord.alert_uuid,
            IdempotencyRecord.created_at,
        ).where(tuple_(IdempotencyRecord.api_key_uuid, IdempotencyRecord.idempotency_key).in_(list(scopes)))
    ).all()
    return {(row.api_key_uuid, row.idempotency_key): row for row in rows}


ALERT_COLUMNS = (
    "alert_uuid",
    "alert_id",
    "organization_uuid",
    "organization_code",
    "alert_provider",
    "alert_type",
    "alert_content",
    "created_at",
    "created_at_source",
    "created_by",
    "modified_at",
    "investigation_status",
    "investigation_retry_count",
)
EVENT_COLUMNS = ("alert_uuid", "at", "actor", "kind", "from_status", "to_status", "message")
IDEMPOTENCY_COLUMNS = ("api_key_uuid", "idempotency_key", "request_hash", "alert_uuid", "created_at")


def _insert(session: Session, accepted: list[tuple[_Submission, _Entry, Organization]], now: int) -> None:
    """Number the accepted alerts (one counter bump per organization and provider) and insert them all."""
    wanted: dict[tuple[uuid.UUID, str], int] = {}
    for _submission, entry, organization in accepted:
        counter = (organization.organization_uuid, entry.payload.alert_provider)
        wanted[counter] = wanted.get(counter, 0) + 1
    next_number = {counter: _reserve(session, counter, count) for counter, count in wanted.items()}
    alerts: list[tuple[Any, ...]] = []
    events: list[tuple[Any, ...]] = []
    idempotency: list[tuple[Any, ...]] = []
    created = int(InvestigationStatus.CREATED)
    random_bytes = os.urandom(16 * len(accepted))  # one syscall for the group, not one per uuid4()
    for position, (submission, entry, organization) in enumerate(accepted):
        payload, caller = entry.payload, submission.principal
        counter = (organization.organization_uuid, payload.alert_provider)
        number = next_number[counter]
        next_number[counter] = number + 1
        alert_uuid = uuid.UUID(bytes=random_bytes[16 * position : 16 * position + 16], version=4)
        values = (
            alert_uuid,
            f"{organization.organization_code}-{payload.alert_provider.upper()}-{number}",
            organization.organization_uuid,
            organization.organization_code,
            payload.alert_provider,
            payload.alert_type,
            payload.alert_content,
            now,
            payload.created_at_source if payload.created_at_source is not None else now,
            caller.actor_uuid,
            now,
            created,
            0,
        )
        alerts.append(values)
        message = "Alert received" + ("" if payload.alert_type else " without alert_type; not investigated")
        events.append((alert_uuid, now, caller.actor, "created", None, created, message))
        if entry.idempotency_key is not None:
            idempotency.append((caller.actor_uuid, entry.idempotency_key, entry.request_hash, alert_uuid, now))
        fields: dict[str, Any] = dict(zip(ALERT_COLUMNS, values, strict=True))
        record = AlertOut.model_construct(  # values this function just set: validation would only re-check them
            **fields,
            case_id=None,
            investigator=None,
            completed_at=None,
            failure_reason=None,
        )
        entry.outcome = Stored(record, created=True)
    insert_rows(session, _table(Alert), ALERT_COLUMNS, alerts)
    insert_rows(session, _table(AlertEvent), EVENT_COLUMNS, events)
    insert_rows(session, _table(IdempotencyRecord), IDEMPOTENCY_COLUMNS, idempotency)


def _table(model: type[Base]) -> Table:
    table = model.__table__
    assert isinstance(table, Table)
    return table


def _reserve(session: Session, counter: tuple[uuid.UUID, str], count: int) -> int:
    """Move one counter forward by ``count`` and return the first number of the block.

    The counter row stays locked until the group commits, which is what keeps numbering gap-free; the group
    holds it for one short transaction instead of each request holding it across its own.
    """
    organization_uuid, provider = counter
    key = {"organization_uuid": organization_uuid, "alert_provider": provider}
    return increment_counter(session, AlertCounter, key, by=count) - count + 1


def _authorize(principal: Principal, payload: AlertCreate, limits: IntakeLimits, targets: _Targets) -> Organization:
    organization = authorize_organization(
        principal, payload.organization_code, targets.organization(payload.organization_code)
    )
    if targets.provider(payload.alert_provider) is None:
        raise ValidationFailed(
            f"Unknown alert_provider {payload.alert_provider!r}; list valid values with GET /serviceapi/providers.",
            code="unknown_alert_provider",
            details=[{"field": "alert_provider", "value": payload.alert_provider}],
        )
    content_bytes = len(payload.alert_content.encode())
    if content_bytes > limits.max_content_bytes:
        raise PayloadTooLarge(
            f"alert_content is {content_bytes} bytes; the limit is {limits.max_content_bytes} bytes.",
            code="alert_content_too_large",
            details=[{"field": "alert_content", "limit_bytes": limits.max_content_bytes}],
        )
    return organization


def _key_conflict() -> Conflict:
    return Conflict(
        "This Idempotency-Key was already used with a different request body.", code="idempotency_key_conflict"
    )


def _failed_item(index: int, error: VigilError) -> BatchItemResult:
    return BatchItemResult(
        index=index,
        status=error.status_code,
        error=ErrorBody(code=error.code, message=error.message, details=error.details),
    )
