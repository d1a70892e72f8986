"""Fail fast while the database is not answering, instead of every caller waiting out the same timeout.

Without it, each request that reaches a frozen server holds a thread (and a pooled connection) for the whole
answer deadline, so a burst exhausts the thread pool and later requests queue far past the documented bound.
"""

from __future__ import annotations

import logging
import threading
import time

from vigil.errors import DatabaseUnavailable

logger = logging.getLogger("vigil.db")


class Breaker:
    """Down after a connection could not be opened or an answer did not come; up after any answer.

    While down, callers are refused at once, except one trial caller per `trial_interval` seconds, which finds out
    (within the usual bounds) whether the database is back.
    """

    def __init__(self, trial_interval: float = 1.0) -> None:
        self.trial_interval = trial_interval
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._next_trial = 0.0

    @property
    def is_down(self) -> bool:
        return self._down_since is not None

    def trip(self) -> None:
        now = time.monotonic()
        with self._lock:
            if self._down_since is None:
                self._down_since = now
                logger.warning("the database is not answering; refusing requests until it does")
            self._next_trial = now + self.trial_interval

    def recover(self) -> None:
        with self._lock:
            if self._down_since is None:
                return
            down_for, self._down_since = time.monotonic() - self._down_since, None
        logger.warning("the database answers again after %.1f s", down_for)

    def admit(self) -> None:
        """Return if the caller may use the database now; raise DatabaseUnavailable (503) otherwise."""
        if self._down_since is None:
            return
        now = time.monotonic()
        with self._lock:
            if self._down_since is None or now >= self._next_trial:
                self._next_trial = now + self.trial_interval
                return
        raise DatabaseUnavailable("The database is not answering; retry shortly.")
