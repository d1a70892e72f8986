"""The one outbound HTTP layer every integration uses: the outbound-URL policy, timeouts, retries with jittered
backoff honouring ``Retry-After``, per-key rate limiting and a token cache, so vendor clients only describe requests
and map errors.

Secrets travel in headers, bodies and (for webhook URLs) URL paths, so this module logs only method, host and
status, never URLs, headers or bodies; the credentials it sends are taught to the call's ``Redactor``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any

import httpx

from vigil.input_types import has_control_characters
from vigil.integrations.errors import Failure, IntegrationError
from vigil.integrations.pagination import PageInfo, collect_pages, follow_odata_next_links
from vigil.integrations.policy import OutboundPolicy
from vigil.integrations.redaction import Redactor

__all__ = [
    "DEFAULT_TIMEOUT",
    "IDEMPOTENT_METHODS",
    "OutboundClient",
    "PageInfo",
    "RateLimit",
    "RateLimiter",
    "RetryPolicy",
    "Slot",
    "TokenCache",
    "collect_pages",
    "follow_odata_next_links",
    "get_outbound_client",
    "json_or_none",
    "parse_retry_after",
]

logger = logging.getLogger("vigil.integrations.http")


class _RedactUrls(logging.Filter):
    """httpx logs every request's full URL at INFO; webhook URLs carry their secret in the path and other
    vendors may carry tokens in query strings, so only scheme, host and port survive."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                f"{a.scheme}://{a.netloc.decode()}/<redacted>" if isinstance(a, httpx.URL) else a for a in record.args
            )
        return True


_REDACT_URLS = _RedactUrls()

DEFAULT_TIMEOUT = httpx.Timeout(connect=5.0, read=30.0, write=30.0, pool=5.0)
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
RETRYABLE_SERVER_STATUSES = frozenset({500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to retry: ``max_attempts`` counts the first try; delays are full-jitter exponential backoff."""

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    """A ``Retry-After`` longer than this is not waited for: the last response goes back to the caller instead."""

    def backoff(self, attempt: int) -> float:
        """Full jitter (AWS architecture blog): uniform in [0, min(cap, base * 2**(attempt-1)))."""
        return random.uniform(0.0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))  # noqa: S311


@dataclass(frozen=True)
class RateLimit:
    """A vendor's request budget: ``rate`` requests per second sustained, ``burst`` back-to-back when idle.

    ``rate`` is also a hard ceiling over any rolling second (plus ``guard`` seconds of slack for network jitter),
    because some vendors count requests per second, not per token bucket.
    """

    rate: float
    burst: int
    guard: float = 0.1


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header given as delta-seconds or an HTTP date; None if absent/bad."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


class RateLimiter:
    """GCRA token bucket plus a rolling one-second ceiling, shared by every caller of one key.

    The ceiling cannot trust send times: network jitter may delay an early request's arrival at the vendor until
    just after a later one's, and the vendor counts arrivals. A request's arrival is only known to lie between its
    send and its response, so a sent request keeps its place in the window until its response (or failure) is in,
    and for one second plus ``guard`` after that. At most ``rate`` requests are ever in that state, whatever the
    network does.

    Each check is a short critical section under a thread lock (no awaits), so one limiter is safe across event
    loops and worker threads; callers sleep outside the lock and check again.
    """

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic) -> None:
        if limit.rate <= 0 or limit.burst < 1:
            raise ValueError("rate must be > 0 and burst >= 1")
        self._limit = limit
        self._clock = clock
        self._interval = 1.0 / limit.rate
        self._tolerance = (limit.burst - 1) * self._interval
        self._ceiling = max(1, int(limit.rate))
        self._tat = 0.0
        self._window: list[Slot] = []
        self._lock = threading.Lock()

    def try_acquire(self) -> Slot | float:
        """Take a send slot now, or return how long to wait before trying again.

        Only actual send times count (not promised future slots), so a caller that wakes up late can never make a
        later caller's request land inside the same rolling second.
        """
        with self._lock:
            now = self._clock()
            horizon = now - 1.0 - self._limit.guard
            self._window = [s for s in self._window if s.done is None or s.done > horizon]
            start = max(now, self._tat - self._tolerance)
            if len(self._window) >= self._ceiling:
                finished = [s.done for s in self._window if s.done is not None]
                # All in flight: look again one interval later (a response frees a place a second after it).
                start = max(start, min(finished) + 1.0 + self._limit.guard if finished else now + self._interval)
            if start > now:
                return start - now
            self._tat = max(self._tat, now) + self._interval
            slot = Slot(sent=now)
            self._window.append(slot)
            return slot

    def finish(self, slot: Slot) -> None:
        """Mark the request's response (or failure) as in: the vendor has seen it by now, if ever."""
        with self._lock:
            slot.done = self._clock()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Wait for a send slot, hold it around one request and release it when the request is over."""
        while not isinstance(granted := self.try_acquire(), Slot):  # noqa: ASYNC110 - waits for time, not an event
            await asyncio.sleep(granted)
        try:
            yield
        finally:
            self.finish(granted)


@dataclass
class Slot:
    """One sent request in a limiter's window: when it left and when its response (or failure) came back."""

    sent: float
    done: float | None = None


@dataclass
class _CachedToken:
    value: str
    refresh_at: float


TokenFetcher = Callable[[], Awaitable[tuple[str, float]]]


class TokenCache:
    """Bearer tokens by key, reused until shortly before expiry; one fetch at a time per key and event loop.

    The refresh margin is ``min(margin, 10% of lifetime)`` so a normal 3599 s token refreshes a minute early while
    very short-lived tokens are still reused.
    """

    def __init__(self, margin: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._margin = margin
        self._clock = clock
        self._tokens: dict[str, _CachedToken] = {}
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
            weakref.WeakKeyDictionary()
        )

    def _fresh(self, key: str) -> str | None:
        cached = self._tokens.get(key)
        if cached is not None and self._clock() < cached.refresh_at:
            return cached.value
        return None

    def _lock(self, key: str) -> asyncio.Lock:
        per_loop = self._locks.setdefault(asyncio.get_running_loop(), {})
        return per_loop.setdefault(key, asyncio.Lock())

    async def get(self, key: str, fetch: TokenFetcher) -> str:
        """Return a valid token for ``key``, calling ``fetch`` (-> token, expires_in seconds) only when needed."""
        token = self._fresh(key)
        if token is not None:
            return token
        async with self._lock(key):
            token = self._fresh(key)
            if token is not None:
                return token
            value, expires_in = await fetch()
            lifetime = max(0.0, expires_in)
            refresh_at = self._clock() + lifetime - min(self._margin, lifetime * 0.1)
            self._tokens[key] = _CachedToken(value=value, refresh_at=refresh_at)
            return value

    def invalidate(self, key: str, token: str) -> None:
        """Forget ``token`` (e.g. after a 401); a token another caller already refreshed is kept."""
        cached = self._tokens.get(key)
        if cached is not None and cached.value == token:
            del self._tokens[key]


class OutboundClient:
    """Process-wide outbound HTTP: one pooled ``httpx.AsyncClient`` (per event loop), retries and rate limits.

    Vendor clients get the final ``httpx.Response`` (2xx or the last failing one) and map status/body to
    ``IntegrationError`` themselves; only transport failures that outlive the retries are raised here.
    """

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        tokens: TokenCache | None = None,
        user_agent: str = "vigil/0.1 (+integrations)",
        policy: OutboundPolicy | None = None,
    ) -> None:
        """``policy`` defaults to the environment's (``VIGIL_OUTBOUND_ALLOWED_HOSTS``), so no client is without one."""
        httpx_logger = logging.getLogger("httpx")
        if _REDACT_URLS not in httpx_logger.filters:  # before the first request, however the process logs
            httpx_logger.addFilter(_REDACT_URLS)
        self.policy = policy or OutboundPolicy.from_environment()
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.tokens = tokens or TokenCache()
        self._user_agent = user_agent
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )
        self._limiters: dict[str, RateLimiter] = {}
        self._limiters_lock = threading.Lock()

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            client = httpx.AsyncClient(
                timeout=self.timeout, follow_redirects=False, headers={"User-Agent": self._user_agent}
            )
            self._clients[loop] = client
        return client

    def limiter(self, key: str, limit: RateLimit) -> RateLimiter:
        """The limiter shared by every request made with ``key`` (created on first use)."""
        with self._limiters_lock:
            limiter = self._limiters.get(key)
            if limiter is None:
                limiter = self._limiters[key] = RateLimiter(limit)
            return limiter

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        data: Mapping[str, str] | None = None,
        content: bytes | None = None,
        rate_limit: RateLimit | None = None,
        limiter_key: str | None = None,
        idempotent: bool | None = None,
        redactor: Redactor | None = None,
    ) -> httpx.Response:
        """Send one logical request, retrying 429 always and 5xx/timeouts only when the request is idempotent.

        A request that never reached the server (connect error, pool timeout) is always safe to retry. ``idempotent``
        defaults from the method; pass True for read-only POSTs (token, hunting query, auth.test). Each attempt
        checks the destination against the outbound-URL policy and connects to the address that was checked; a
        redirect is never followed (credentials must not travel on) and comes back as a permanent error.
        ``redactor`` learns the credentials in ``headers`` so an echo of them can be removed later.
        """
        method = method.upper()
        checked_headers = _encodable_headers(headers)
        if redactor is not None:
            redactor.learn_headers(checked_headers)
        retry_unsafe = method in IDEMPOTENT_METHODS if idempotent is None else idempotent
        host = _url(url).host
        limiter = self.limiter(limiter_key or host, rate_limit) if rate_limit else None
        policy = self.retry
        for attempt in range(1, policy.max_attempts + 1):
            last = attempt == policy.max_attempts
            destination = await self.policy.destination(url)
            target, pinned = destination.url, dict(checked_headers)
            extensions: dict[str, Any] = {}
            if destination.address is not None:
                # Connect to the address the policy checked (no second lookup an attacker's DNS could answer
                # differently); the vendor still sees its own name in Host and in TLS SNI/certificate checks.
                target = target.copy_with(host=str(destination.address))
                pinned["Host"] = destination.url.netloc.decode("ascii")
                extensions["sni_hostname"] = destination.url.host
            try:
                async with limiter.slot() if limiter is not None else nullcontext():
                    response = await self._client().request(
                        method,
                        target,
                        headers=pinned,
                        params=params,
                        json=json,
                        data=data,
                        content=content,
                        extensions=extensions,
                    )
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
                if last:
                    raise _transport_error(host, exc) from None
                delay = policy.backoff(attempt)
            except httpx.TransportError as exc:
                if last or not retry_unsafe:
                    raise _transport_error(host, exc) from None
                delay = policy.backoff(attempt)
            else:
                if response.is_redirect:
                    await response.aclose()
                    raise _redirect_refused(host, response)
                retryable = response.status_code == 429 or (
                    retry_unsafe and response.status_code in RETRYABLE_SERVER_STATUSES
                )
                if not retryable or last:
                    return response
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                delay = policy.backoff(attempt) if retry_after is None else retry_after
                if delay > policy.max_retry_after:
                    return response
                await response.aclose()
                logger.warning(
                    "outbound retry method=%s host=%s status=%s attempt=%d delay=%.3fs",
                    method,
                    host,
                    response.status_code,
                    attempt,
                    delay,
                )
            await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt always returns or raises")

    async def aclose(self) -> None:
        """Close the pooled client of the running event loop."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> OutboundClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


REDIRECT_REFUSED = Failure(
    "redirect_not_followed",
    "Unexpected redirect",
    "Check the configured URL of the vendor (or the connection's domain/URL): Vigil does not follow redirects, so "
    "credentials never travel to another address.",
)
INVALID_CREDENTIAL_CHARACTERS = Failure(
    "invalid_header_value",
    "Credential contains characters HTTP cannot carry",
    "Re-enter the credential of the connection: it must be printable ASCII (no accents, spaces or control characters).",
)


def _url(url: str) -> httpx.URL:
    try:
        return httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        raise IntegrationError(
            "invalid_url",
            "The vendor URL is not a valid URL.",
            cause="Invalid URL",
            remedy="Correct the connection's domain/URL (or the configured vendor base URL).",
        ) from None


def _encodable_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """Headers HTTP can carry; a value with non-ASCII or control characters is a permanent error, never a crash."""
    for name, value in (headers or {}).items():
        if not value.isascii() or has_control_characters(value):
            raise INVALID_CREDENTIAL_CHARACTERS.error(f"The {name} header value cannot be sent over HTTP.")
    return dict(headers or {})


def _redirect_refused(host: str, response: httpx.Response) -> IntegrationError:
    target = response.next_request.url.host if response.next_request is not None else "another address"
    logger.warning("outbound redirect refused host=%s status=%s to=%s", host, response.status_code, target)
    return REDIRECT_REFUSED.error(
        f"{host} answered HTTP {response.status_code} redirecting to {target}; the redirect was not followed.",
        response.status_code,
    )


def _transport_error(host: str, exc: httpx.TransportError) -> IntegrationError:
    timed_out = isinstance(exc, httpx.TimeoutException)
    logger.warning("outbound failure host=%s error=%s", host, type(exc).__name__)
    return IntegrationError(
        "vendor_timeout" if timed_out else "vendor_unreachable",
        f"{host} {'did not answer in time' if timed_out else 'could not be reached'} ({type(exc).__name__}).",
        cause="Service unreachable" if not timed_out else "Service timed out",
        remedy=f"Check that Vigil can reach {host} (network, proxy, configured base URL) and retry later.",
        transient=True,
    )


_shared: OutboundClient | None = None
_shared_lock = threading.Lock()


def get_outbound_client() -> OutboundClient:
    """The process-wide client, so every connection shares one connection pool, token cache and limiter set."""
    global _shared  # noqa: PLW0603 - a deliberate process singleton
    with _shared_lock:
        if _shared is None:
            _shared = OutboundClient()
        return _shared


def json_or_none(response: httpx.Response) -> Any:
    """The decoded JSON body, or None when the body is empty or not JSON (error pages, plain-text codes)."""
    try:
        return response.json()
    except ValueError:
        return None
