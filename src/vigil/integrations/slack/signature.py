"""Slack request signing (v0): HMAC-SHA256 over ``v0:{timestamp}:{raw body}`` with the app's signing secret.

Checked the way Slack documents it (and slack_sdk's SignatureVerifier does): the timestamp must be within five
minutes of now in either direction, and the signature is compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping
from enum import StrEnum

SIGNATURE_HEADER = "X-Slack-Signature"
TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
RETRY_NUM_HEADER = "X-Slack-Retry-Num"
RETRY_REASON_HEADER = "X-Slack-Retry-Reason"
VERSION = "v0"
MAX_SKEW_SECONDS = 300


class SignatureFailure(StrEnum):
    """Why a request was not accepted as coming from Slack (safe to log: carries no secret)."""

    MISSING_HEADERS = "missing_headers"
    BAD_TIMESTAMP = "bad_timestamp"
    STALE_TIMESTAMP = "stale_timestamp"
    BAD_SIGNATURE = "bad_signature"


def compute_signature(signing_secret: str, timestamp: str, body: bytes) -> str:
    """``v0=<hex>`` for this timestamp and raw body."""
    basestring = f"{VERSION}:{timestamp}:".encode() + body
    digest = hmac.new(signing_secret.encode(), basestring, hashlib.sha256).hexdigest()
    return f"{VERSION}={digest}"


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """Case-insensitive lookup that works for plain dicts as well as Starlette's Headers."""
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return value


def verify_request(
    signing_secret: str, headers: Mapping[str, str], body: bytes, *, now: float | None = None
) -> SignatureFailure | None:
    """None when the request is Slack's; otherwise the reason it is not."""
    timestamp = (_header(headers, TIMESTAMP_HEADER) or "").strip()
    signature = (_header(headers, SIGNATURE_HEADER) or "").strip()
    if not timestamp or not signature:
        return SignatureFailure.MISSING_HEADERS
    try:
        sent_at = int(timestamp)
    except ValueError:
        return SignatureFailure.BAD_TIMESTAMP
    current = time.time() if now is None else now
    if abs(current - sent_at) > MAX_SKEW_SECONDS:
        return SignatureFailure.STALE_TIMESTAMP
    expected = compute_signature(signing_secret, timestamp, body)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        return SignatureFailure.BAD_SIGNATURE
    return None
