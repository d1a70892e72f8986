"""Secrets at rest: Fernet tokens under a key from ``VIGIL_SECRET_KEY`` or a 0600 key file in the data directory.

Several keys may be configured at once (MultiFernet): the first encrypts, all decrypt, which is what makes key
rotation possible without downtime. Key material and plaintexts are never logged or put in error messages.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import stat
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from vigil.errors import ServiceMisconfigured, VigilError
from vigil.settings import Settings

logger = logging.getLogger("vigil.secrets")

KEY_FILE_NAME = "secret.key"


class SecretsUndecryptable(VigilError):
    """Stored secrets were encrypted with a key that is no longer configured."""

    status_code = 500
    code = "secrets_undecryptable"


def generate_key() -> str:
    return Fernet.generate_key().decode()


def _parse_keys(raw: Sequence[str], origin: str) -> list[bytes]:
    keys: list[bytes] = []
    for position, text in enumerate((k.strip() for k in raw), start=1):
        if not text:
            continue
        try:
            Fernet(text.encode())
        except ValueError:
            raise ServiceMisconfigured(
                f"Key {position} in {origin} is not a Fernet key (32 url-safe base64-encoded bytes); "
                "generate one with `vigil secrets generate-key`.",
                code="invalid_secret_key",
            ) from None
        keys.append(text.encode())
    if not keys:
        raise ServiceMisconfigured(f"{origin} holds no key.", code="invalid_secret_key")
    return keys


class KeySource(ABC):
    """Where keys come from; ``keys()`` is called on every use so a rotated key file is picked up at once."""

    description = "keys"

    @abstractmethod
    def keys(self, *, reload: bool = False) -> list[bytes]:
        """The keys, newest (encrypting) first."""

    @property
    def writable(self) -> bool:
        return False

    def write(self, keys: Sequence[bytes]) -> None:
        raise ServiceMisconfigured(f"Vigil cannot change {self.description}; edit it yourself.")


@dataclass
class EnvKeySource(KeySource):
    """``VIGIL_SECRET_KEY``: one key, or several separated by commas during a rotation."""

    raw: str
    description = "VIGIL_SECRET_KEY"

    def keys(self, *, reload: bool = False) -> list[bytes]:
        return _parse_keys(self.raw.split(","), self.description)


class FileKeySource(KeySource):
    """``<data_dir>/secret.key``: one key per line, the first encrypts; created 0600 on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = f"the key file {path}"
        self._lock = threading.Lock()
        self._cached: tuple[tuple[int, int, int], list[bytes]] | None = None

    @property
    def writable(self) -> bool:
        return True

    def keys(self, *, reload: bool = False) -> list[bytes]:
        with self._lock:
            self._ensure_exists()
            info = self.path.stat()
            signature = (info.st_ino, info.st_mtime_ns, info.st_size)
            if reload or self._cached is None or self._cached[0] != signature:
                if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                    logger.warning("key file is readable by others; chmod 600 it path=%s", self.path)
                keys = _parse_keys(self.path.read_text().splitlines(), self.description)
                self._cached = (signature, keys)
            return list(self._cached[1])

    def _ensure_exists(self) -> None:
        if self.path.exists():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return  # another process created it first; use theirs
        with os.fdopen(descriptor, "w") as handle:
            handle.write(generate_key() + "\n")
        logger.info("created secret key file path=%s", self.path)

    def write(self, keys: Sequence[bytes]) -> None:
        """Replace the file atomically (write a 0600 temporary file, then rename over the old one)."""
        with self._lock:
            temporary = self.path.with_name(self.path.name + ".new")
            temporary.unlink(missing_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write("".join(k.decode() + "\n" for k in keys))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
            self._cached = None


class SecretBox:
    """Encrypts a connection's secret values as one Fernet token of a JSON object, and decrypts it again."""

    def __init__(self, source: KeySource) -> None:
        self.source = source

    @classmethod
    def from_settings(cls, settings: Settings) -> SecretBox:
        if settings.secret_key is not None and settings.secret_key.get_secret_value().strip():
            return cls(EnvKeySource(settings.secret_key.get_secret_value()))
        return cls(FileKeySource(settings.data_dir / KEY_FILE_NAME))

    def _fernet(self, *, reload: bool = False) -> MultiFernet:
        return MultiFernet([Fernet(k) for k in self.source.keys(reload=reload)])

    def encrypt(self, values: Mapping[str, str]) -> str:
        return self._fernet().encrypt(json.dumps(dict(values), sort_keys=True).encode()).decode()

    def decrypt(self, token: str, *, what: str = "stored secrets") -> dict[str, str]:
        try:
            plaintext = self._decrypt_bytes(token)
        except InvalidToken:
            raise SecretsUndecryptable(
                f"The {what} cannot be decrypted with the configured key(s) ({self.source.description}). "
                "Restore the key they were encrypted with, or re-enter the secrets.",
            ) from None
        loaded = json.loads(plaintext)
        return {str(k): str(v) for k, v in loaded.items()}

    def _decrypt_bytes(self, token: str) -> bytes:
        try:
            return self._fernet().decrypt(token.encode())
        except InvalidToken:
            # The key file may have been rotated by another process a moment ago: read it once more.
            return self._fernet(reload=True).decrypt(token.encode())

    def rotate(self, token: str) -> str:
        """The same plaintext under the first (newest) key; raises InvalidToken when no key decrypts it."""
        return self._fernet().rotate(token.encode()).decode()

    def derived_keys(self, purpose: str) -> list[bytes]:
        """Per-purpose HMAC keys derived from every configured key, newest first (sign with the first, verify any).

        The console signs its cookies and CSRF tokens with these, so there is one secret to manage and share.
        """
        keys = self.source.keys()
        return [hmac.new(key, f"vigil:{purpose}".encode(), hashlib.sha256).digest() for key in keys]

    def decrypts_with_primary_only(self, token: str) -> bool:
        try:
            Fernet(self.source.keys()[0]).decrypt(token.encode())
        except InvalidToken:
            return False
        return True
