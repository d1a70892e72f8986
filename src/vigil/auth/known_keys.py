"""API keys this process verified moments ago, so intake's request path does not query the database per alert.

Only intake uses it, and only to decide who is asking (and whose rate limit applies): the transaction that
stores the alerts checks every key again (`auth.service.current_principals`), so a key revoked or expired
before that transaction stores nothing, whatever this memo still holds.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

from vigil.auth.schemas import Principal
from vigil.auth.service import hash_api_key

DEFAULT_TTL_SECONDS = 10.0
DEFAULT_CAPACITY = 10_000


class KnownKeys:
    def __init__(
        self,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        capacity: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl = ttl_seconds
        self._capacity = capacity
        self._clock = clock
        self._entries: dict[str, tuple[Principal, float]] = {}  # key hash → principal, verified at
        self._lock = threading.Lock()

    def get(self, presented: str) -> Principal | None:
        """The principal of a key verified less than the TTL ago, else None (verify it again)."""
        digest = hash_api_key(presented)
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None:
                return None
            principal, verified_at = entry
            if self._clock() - verified_at >= self._ttl:
                del self._entries[digest]
                return None
            return principal

    def remember(self, presented: str, principal: Principal) -> None:
        with self._lock:
            if len(self._entries) >= self._capacity:
                self._entries.clear()  # only valid keys get here, so this is rare; start over rather than track age
            self._entries[hash_api_key(presented)] = (principal, self._clock())

    def forget(self, key_uuids: set[uuid.UUID]) -> None:
        """Drop keys the storing transaction refused, so their next request gets the 401 at once."""
        if not key_uuids:
            return
        with self._lock:
            for digest in [d for d, (p, _at) in self._entries.items() if p.actor_uuid in key_uuids]:
                del self._entries[digest]
