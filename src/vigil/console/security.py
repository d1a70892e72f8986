"""Console cookies and CSRF: a signed session cookie, CSRF tokens bound to it, and sign-in throttling.

The session cookie carries a random token (only its hash is stored server-side, so sessions can be ended) plus an
HMAC signature, so a forged cookie is refused before any database lookup. CSRF tokens are an HMAC of the session
token (or, before sign-in, of a random pre-login cookie), so every form post proves it came from a Vigil page.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import secrets

from fastapi import Request, Response

from vigil.auth.ratelimit import TokenBucketLimiter
from vigil.errors import Forbidden
from vigil.integrations.secrets import SecretBox

SESSION_COOKIE = "vigil_session"
PRELOGIN_COOKIE = "vigil_prelogin"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"


class ConsoleSigner:
    """Signs cookies and derives CSRF tokens with keys derived from the secrets key (rotation-aware)."""

    def __init__(self, box: SecretBox) -> None:
        self._box = box

    def _mac(self, key: bytes, value: str) -> str:
        digest = hmac.new(key, value.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def sign(self, purpose: str, value: str) -> str:
        return self._mac(self._box.derived_keys(purpose)[0], value)

    def verify(self, purpose: str, value: str, signature: str) -> bool:
        return any(hmac.compare_digest(self._mac(key, value), signature) for key in self._box.derived_keys(purpose))

    def session_cookie_value(self, token: str) -> str:
        return f"{token}.{self.sign('console-session', token)}"

    def session_token(self, cookie_value: str | None) -> str | None:
        """The session token inside a cookie whose signature holds, else None."""
        if not cookie_value or "." not in cookie_value:
            return None
        token, _, signature = cookie_value.rpartition(".")
        return token if self.verify("console-session", token, signature) else None

    def csrf_token(self, anchor: str) -> str:
        return self.sign("console-csrf", anchor)

    def csrf_valid(self, anchor: str, presented: str) -> bool:
        return bool(presented) and self.verify("console-csrf", anchor, presented)


def csrf_anchor(request: Request, signer: ConsoleSigner) -> str | None:
    """What this browser's CSRF token is bound to: its session token, else its pre-login cookie."""
    token = signer.session_token(request.cookies.get(SESSION_COOKIE))
    return token or request.cookies.get(PRELOGIN_COOKIE)


def ensure_prelogin_cookie(request: Request, response: Response, value: str) -> None:
    """The sign-in form needs a CSRF anchor before there is a session: a random cookie, set once."""
    if request.cookies.get(PRELOGIN_COOKIE) != value:
        response.set_cookie(PRELOGIN_COOKIE, value, httponly=True, samesite="lax", secure=_secure(request), path="/")


def prelogin_anchor(request: Request) -> str:
    return request.cookies.get(PRELOGIN_COOKIE) or secrets.token_urlsafe(24)


async def require_csrf(request: Request, signer: ConsoleSigner) -> None:
    """Every console POST carries the token as a form field or (HTMX) header, else 403."""
    presented = request.headers.get(CSRF_HEADER, "")
    if not presented and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        form = await request.form()
        presented = str(form.get(CSRF_FIELD, ""))
    anchor = csrf_anchor(request, signer)
    if anchor is None or not signer.csrf_valid(anchor, presented):
        raise Forbidden(
            "This form has expired or did not come from Vigil; reload the page and try again.",
            code="csrf_failed",
        )


def set_session_cookie(request: Request, response: Response, value: str, max_age: int) -> None:
    response.set_cookie(
        SESSION_COOKIE, value, max_age=max_age, httponly=True, samesite="lax", secure=_secure(request), path="/"
    )


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path="/")


def _secure(request: Request) -> bool:
    """Mark cookies Secure when the browser reached us over HTTPS (directly or via a TLS-terminating proxy)."""
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "") == "https"


class SignInThrottle:
    """Slows password guessing: a few tries per account per minute (from anywhere), more per client address.

    Every attempt counts, right or wrong, and unknown emails have buckets like real ones, so the answers say
    nothing about which accounts exist. An IPv6 client is counted by its /64, which one host can rotate through.
    """

    def __init__(self) -> None:
        self.per_account = TokenBucketLimiter(5 / 60, 5, subject="sign-in attempts for this account")
        self.per_client = TokenBucketLimiter(30 / 60, 30, subject="sign-in attempts from this address")

    def check(self, email: str, client: str) -> None:
        self.per_client.acquire(client_network(client))
        self.per_account.acquire(email.strip().lower())


def client_network(host: str) -> str:
    """What one client controls: its IPv4 address (also when IPv4-mapped), or its IPv6 /64."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)
