"""The internal skill "Look up related alerts": same organization, same *subject*, last 30 days.

Two alerts are related when they are about the same thing, not when the same value appears somewhere in both:
only values in the subject role (`Role.SUBJECT`: the account that acted, the affected machine, the remote
address, the file or domain the alert is about) of *both* alerts count. On top of that:

* a private or reserved address alone relates nothing (every site has a 10.0.0.5, and DHCP hands it on); it is
  reported as shared only next to another shared subject value;
* a value that is a subject of at least `NOISY_SHARE` of the scanned alerts *and* of at least
  `NOISY_MIN_ALERTS` of them (the proxy every sign-in comes through, the scanner, the shared service account)
  relates nothing either; it is listed under ``ignored_noisy`` with the number of alerts it is a subject of.

Rules and examples: docs/entities.md.
"""

from __future__ import annotations

import math
import threading
import uuid
from collections import Counter, OrderedDict
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from vigil.alerts.models import Alert
from vigil.cases.models import Case
from vigil.core.entities import Entities, EntityKind, extract_entities, is_public_ip
from vigil.db.base import epoch_now

WINDOW_SECONDS = 30 * 86400
MAX_CANDIDATES = 500
MAX_RESULTS = 25
#: A value that is a subject of at least this share of the scanned alerts…
NOISY_SHARE = 0.2
#: …and of at least this many of them is noise, not a relation.
NOISY_MIN_ALERTS = 10

#: Kinds that can relate two alerts, in the order a reason names them (URLs relate through their domain).
_SHARED_KINDS = (
    EntityKind.USERS,
    EntityKind.EMAILS,
    EntityKind.HOSTS,
    EntityKind.DEVICE_IDS,
    EntityKind.IPS,
    EntityKind.SHA256S,
    EntityKind.SHA1S,
    EntityKind.MD5S,
    EntityKind.DOMAINS,
)
#: How a reason names each kind; a user's UPN is both a user and an e-mail and is named once, as a user.
_LABELS: dict[EntityKind, tuple[str, str]] = {
    EntityKind.USERS: ("user", "users"),
    EntityKind.EMAILS: ("user", "users"),
    EntityKind.HOSTS: ("host", "hosts"),
    EntityKind.DEVICE_IDS: ("device", "devices"),
    EntityKind.IPS: ("IP", "IPs"),
    EntityKind.SHA256S: ("file", "files"),
    EntityKind.SHA1S: ("file", "files"),
    EntityKind.MD5S: ("file", "files"),
    EntityKind.DOMAINS: ("domain", "domains"),
}

_Shared = dict[EntityKind, list[str]]
#: A candidate's subject values per shared kind (kinds without subjects left out).
_Subjects = dict[EntityKind, frozenset[str]]
#: How many candidates' subjects a process keeps: several organizations' windows of `MAX_CANDIDATES`.
SUBJECT_CACHE_SIZE = 8192


class _SubjectCache:
    """Subjects of recently scanned alerts, so each investigation does not extract entities from 500 others again.

    Every investigation scans the newest `MAX_CANDIDATES` alerts of its organization; consecutive ones scan
    nearly the same alerts, and extracting their entities was most of an investigation's CPU time. An alert's
    content is stored verbatim and never changed afterwards, and a uuid is never reused, so the subjects are a
    function of the uuid: a hit needs no content from the database at all. Bounded (least recently used goes).
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[uuid.UUID, _Subjects] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, alert_uuid: uuid.UUID) -> _Subjects | None:
        with self._lock:
            subjects = self._entries.get(alert_uuid)
            if subjects is not None:
                self._entries.move_to_end(alert_uuid)
            return subjects

    def put(self, alert_uuid: uuid.UUID, content: str) -> _Subjects:
        entities = extract_entities(content)
        subjects = {kind: frozenset(values) for kind in _SHARED_KINDS if (values := entities.subject(kind))}
        with self._lock:
            self._entries[alert_uuid] = subjects
            self._entries.move_to_end(alert_uuid)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return subjects


_SUBJECTS = _SubjectCache(SUBJECT_CACHE_SIZE)


def related_alerts(session: Session, alert_uuid: uuid.UUID, entities: Entities) -> dict[str, Any]:
    """Alerts of the same organization in the last 30 days about the same subject as this one.

    Scans the newest `MAX_CANDIDATES` other alerts of the window. ``count`` is the number of matches, the list
    holds the newest `MAX_RESULTS`, each with its ``shared`` subject values and a ``reason`` sentence.
    """
    organization_uuid = session.scalar(select(Alert.organization_uuid).where(Alert.alert_uuid == alert_uuid))
    if organization_uuid is None:
        return _output([], {}, 0)
    if not entities.subjects and not entities.is_empty():  # recorded before entities carried their roles
        entities = extract_entities(
            session.scalar(select(Alert.alert_content).where(Alert.alert_uuid == alert_uuid)) or ""
        )
    mine = {kind: entities.subject(kind) for kind in _SHARED_KINDS if entities.subject(kind)}
    if not mine:
        return _output([], {}, 0)
    lookup = {kind: set(values) for kind, values in mine.items()}
    # Only the uuids: the newest MAX_RESULTS matches are all the output describes, fetched at the end.
    candidates = session.scalars(
        select(Alert.alert_uuid)
        .where(
            Alert.organization_uuid == organization_uuid,
            Alert.alert_uuid != alert_uuid,
            Alert.created_at >= epoch_now() - WINDOW_SECONDS,
        )
        .order_by(Alert.id.desc())
        .limit(MAX_CANDIDATES)
    ).all()
    subjects = _candidate_subjects(session, list(candidates))
    scanned = 0
    frequency: Counter[tuple[EntityKind, str]] = Counter()
    sharing: list[tuple[uuid.UUID, dict[EntityKind, set[str]]]] = []
    for other in candidates:
        scanned += 1
        theirs = subjects.get(other)
        if theirs is None:  # deleted between the two queries
            continue
        common = {kind: values & theirs.get(kind, frozenset()) for kind, values in lookup.items()}
        common = {kind: values for kind, values in common.items() if values}
        if common:
            frequency.update((kind, value) for kind, values in common.items() for value in values)
            sharing.append((other, common))
    threshold = max(NOISY_MIN_ALERTS, math.ceil(NOISY_SHARE * scanned))
    noisy = {key for key, alerts in frequency.items() if alerts >= threshold}
    matched: list[tuple[uuid.UUID, _Shared]] = []
    for other, common in sharing:
        shared = {
            kind: kept
            for kind, values in mine.items()
            if (kept := [v for v in values if v in common.get(kind, ()) and (kind, v) not in noisy])
        }
        if _relates(shared):
            matched.append((other, shared))
    described = _describe(session, [other for other, _ in matched[:MAX_RESULTS]])
    matches = [
        {
            **described[other],
            "shared": {kind.value: values for kind, values in shared.items()},
            "reason": _reason(shared),
        }
        for other, shared in matched[:MAX_RESULTS]
        if other in described
    ]
    ignored = {
        kind.value: {value: frequency[(kind, value)] for value in values if (kind, value) in noisy}
        for kind, values in mine.items()
    }
    return _output(matches, {kind: values for kind, values in ignored.items() if values}, len(matched))


def _output(matches: list[dict[str, Any]], ignored_noisy: dict[str, dict[str, int]], count: int) -> dict[str, Any]:
    return {"count": count, "alerts": matches, "ignored_noisy": ignored_noisy}


def _candidate_subjects(session: Session, alert_uuids: list[uuid.UUID]) -> dict[uuid.UUID, _Subjects]:
    """Each candidate's subjects: from the cache, and the contents of the rest loaded in one query."""
    found: dict[uuid.UUID, _Subjects] = {}
    missing = []
    for alert_uuid in alert_uuids:
        cached = _SUBJECTS.get(alert_uuid)
        if cached is None:
            missing.append(alert_uuid)
        else:
            found[alert_uuid] = cached
    if missing:
        rows = session.execute(select(Alert.alert_uuid, Alert.alert_content).where(Alert.alert_uuid.in_(missing)))
        for alert_uuid, content in rows:
            found[alert_uuid] = _SUBJECTS.put(alert_uuid, content)
    return found


def _describe(session: Session, alert_uuids: list[uuid.UUID]) -> dict[uuid.UUID, dict[str, Any]]:
    """What the output says about each related alert, in one query."""
    if not alert_uuids:
        return {}
    rows = session.execute(
        select(
            Alert.alert_uuid,
            Alert.alert_id,
            Alert.alert_type,
            Alert.alert_provider,
            Alert.created_at,
            Alert.case_id,
            Case.ai_disposition,
            Case.disposition,
        )
        .outerjoin(Case, Case.alert_uuid == Alert.alert_uuid)
        .where(Alert.alert_uuid.in_(alert_uuids))
    )
    return {
        row.alert_uuid: {
            "alert_id": row.alert_id,
            "alert_type": row.alert_type,
            "alert_provider": row.alert_provider,
            "created_at": row.created_at,
            "case_id": row.case_id,
            # What was concluded about it (an analyst's disposition over the AI's): a related alert only says
            # something about this one once it is known to be malicious.
            "disposition": _concluded(row.disposition, row.ai_disposition),
        }
        for row in rows
    }


def _concluded(analyst: str | None, ai: str | None) -> str | None:
    """The case's disposition as it stands: the analyst's when set (not pending), else the AI's."""
    if analyst and analyst != "pending":
        return analyst
    return ai or None


def _relates(shared: _Shared) -> bool:
    """At least one shared subject value, and not only private/reserved addresses."""
    return any(kind is not EntityKind.IPS or any(is_public_ip(v) for v in values) for kind, values in shared.items())


def _reason(shared: _Shared) -> str:
    """``same subject user jane@acme.example and IP 91.214.124.19``."""
    named: dict[str, list[str]] = {}
    plurals: dict[str, str] = {}
    for kind in _SHARED_KINDS:
        singular, plural = _LABELS[kind]
        plurals[singular] = plural
        values = named.setdefault(singular, [])
        values.extend(v for v in shared.get(kind, ()) if v not in values)
    parts = [
        f"{singular if len(values) == 1 else plurals[singular]} {', '.join(values)}"
        for singular, values in named.items()
        if values
    ]
    return "same subject " + " and ".join(parts)
