"""The readiness check behind /readyz: does the database answer within the readiness timeout?"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor


class ReadinessProbe:
    """Every /readyz call joins the one database ping in flight, which runs on a single dedicated thread: a frozen
    database costs one stuck thread (until the answer deadline frees it), not one more per probe."""

    def __init__(self, ping: Callable[[], None], timeout: float) -> None:
        self.timeout = timeout
        self._ping = ping
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vigil-readiness")
        self._lock = threading.Lock()
        self._inflight: Future[None] | None = None

    async def ready(self) -> bool:
        with self._lock:
            check = self._inflight
            if check is None or check.done():
                check = self._inflight = self._executor.submit(self._ping)
        try:
            # shield: a probe that gives up must not cancel the ping other probes are waiting on
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(check)), self.timeout)
        except Exception:  # a timeout, or any failure of the ping: not ready either way
            return False
        return True

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
