"""Per-API-key token buckets, so one noisy source cannot starve intake for everyone else."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Hashable

from vigil.errors import RateLimited


class TokenBucketLimiter:
    """In-process buckets: `rate` tokens per second refill up to `burst`; one token per request."""

    def __init__(self, rate: float, burst: int, *, subject: str = "this API key") -> None:
        self.subject = subject
        self.rate = rate
        self.burst = burst
        self._buckets: dict[Hashable, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def acquire(self, key: Hashable) -> None:
        """Take a token or raise RateLimited with the whole seconds until one is available."""
        now = time.monotonic()
        with self._lock:
            tokens, updated = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - updated) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return
            self._buckets[key] = (tokens, now)
        wait = (1.0 - tokens) / self.rate
        raise RateLimited(
            f"Rate limit of {self.rate:g} requests/s (burst {self.burst}) exceeded for {self.subject}.",
            retry_after_seconds=max(1, math.ceil(wait)),
        )
