"""Removing a connection's secrets from vendor text before Vigil stores, shows or logs it.

A vendor may echo the credential it was sent (in an error message, a redirect, a record it returns). The redactor
knows every secret value of the connection in use, the credentials the HTTP layer actually sent (including bearer
tokens the vendor issued, such as an OAuth access token) and their obvious encodings, and replaces each with
``[redacted]`` wherever vendor text leaves the integrations layer.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 6
"""Shorter values are not redacted: replacing every "abc" in a vendor message would destroy it, and a credential
that short is not worth hiding from the person who typed it (field validation asks for real keys)."""

_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "x-auth-key", "api-key"})
_SCHEME_PREFIX = re.compile(r"^(?P<scheme>[A-Za-z][\w.+-]*)\s+(?P<value>\S.*)$")


def _variants(value: str) -> set[str]:
    """The value and the encodings a vendor may echo it in: URL-encoded (path and form), JSON-escaped, base64."""
    variants = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1]}
    variants.add(base64.b64encode(value.encode()).decode().rstrip("="))
    return {v for v in variants if len(v) >= MIN_SECRET_LENGTH}


class Redactor:
    """The secrets of one connection (plus what was sent with them); thread-safe, grows while a call runs."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        for secret in secrets:
            self.add(secret)

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} values)"  # never the values

    def add(self, value: str | None) -> None:
        """Remember a secret (and its encodings); values shorter than ``MIN_SECRET_LENGTH`` are ignored."""
        text = (value or "").strip()
        if len(text) < MIN_SECRET_LENGTH:
            return
        found = _variants(text)
        if "://" in text:  # a secret URL (a webhook URL): its path is the secret part and may be echoed alone
            path = text.split("://", 1)[1].partition("/")[2]
            found |= _variants("/" + path) if len(path) >= MIN_SECRET_LENGTH else set()
        with self._lock:
            if found <= self._secrets:
                return
            self._secrets |= found
            ordered = sorted(self._secrets, key=len, reverse=True)  # longest first: a prefix never hides a tail
            self._pattern = re.compile("|".join(re.escape(s) for s in ordered))

    def learn_headers(self, headers: Mapping[str, str] | None) -> None:
        """Credentials in request headers: ``Bearer <token>``, ``Basic <base64 user:password>``, API-key headers."""
        for name, value in (headers or {}).items():
            if name.lower() not in _CREDENTIAL_HEADERS:
                continue
            self.add(value)
            match = _SCHEME_PREFIX.match(value.strip())
            if match is None:
                continue
            credential = match["value"].strip()
            self.add(credential)
            if match["scheme"].lower() == "basic":
                self._learn_basic(credential)

    def _learn_basic(self, encoded: str) -> None:
        try:
            pair = base64.b64decode(encoded, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return
        self.add(pair)
        self.add(pair.partition(":")[2])

    def redact(self, text: str) -> str:
        pattern = self._pattern
        return text if pattern is None else pattern.sub(REDACTED, text)

    def redact_optional(self, text: str | None) -> str | None:
        return None if text is None else self.redact(text)

    def redact_data(self, data: Any) -> Any:
        """JSON-like data with every string (keys included) redacted."""
        if isinstance(data, str):
            return self.redact(data)
        if isinstance(data, Mapping):
            return {self.redact_data(k): self.redact_data(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.redact_data(item) for item in data]
        return data
