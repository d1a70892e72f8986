"""Runs integration coroutines from synchronous code (workflow steps) on one long-lived event loop.

Skills are async (httpx); workflow steps are sync. A single loop thread per process keeps one
connection pool, token cache and rate limiter set for every call, which per-call loops would not.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class AsyncBridge:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="integrations-loop", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        """Wait for the coroutine's result; on timeout the coroutine is cancelled and TimeoutError raised."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()
