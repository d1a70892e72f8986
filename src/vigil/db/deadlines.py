"""One thread that runs each armed action once its deadline passes (requests' waits on a database writer)."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable

#: Expired actions run in batches at most this often: deadlines are seconds long, a thread waking for each of
#: thousands of requests per second would cost more than the precision is worth.
GRANULARITY_SECONDS = 0.05


class Deadlines:
    """Every action gets the same delay, so the queue is already in deadline order (no heap, no cancellation:
    an action whose wait ended in time finds nothing left to do)."""

    def __init__(self, delay: float, name: str) -> None:
        self.delay = delay
        self._name = name
        self._queue: collections.deque[tuple[float, Callable[[], None]]] = collections.deque()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def arm(self, action: Callable[[], None]) -> None:
        with self._wake:
            if self._closed:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._queue.append((time.monotonic() + self.delay, action))
            if len(self._queue) == 1:
                self._wake.notify()

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return
                now = time.monotonic()
                due: list[Callable[[], None]] = []
                while self._queue and self._queue[0][0] <= now:
                    due.append(self._queue.popleft()[1])
                if not due:
                    self._wake.wait(max(self._queue[0][0] - now, GRANULARITY_SECONDS))
                    continue
            for action in due:
                action()
            time.sleep(GRANULARITY_SECONDS)
