"""Secret-key rotation: re-encrypt every connection's secrets under the newest key."""

from __future__ import annotations

import logging

from cryptography.fernet import InvalidToken
from sqlalchemy import select, text

from vigil.db.session import Database
from vigil.integrations.models import Connection
from vigil.integrations.secrets import SecretBox, SecretsUndecryptable

logger = logging.getLogger("vigil.secrets")


def reencrypt_all(db: Database, box: SecretBox) -> int:
    """Re-encrypt every connection's secrets under the first configured key; returns how many rows changed.

    On PostgreSQL the table is locked against concurrent writers for the pass; SQLite's write lock does that.
    """
    with db.write() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("LOCK TABLE connections IN SHARE ROW EXCLUSIVE MODE"))
        count = 0
        for connection in session.scalars(select(Connection)):
            try:
                connection.secret_values = box.rotate(connection.secret_values)
            except InvalidToken:
                raise SecretsUndecryptable(
                    f"Connection '{connection.name}' cannot be decrypted with any configured key; "
                    "rotation stopped and nothing was changed.",
                ) from None
            count += 1
        return count


def stale_connections(db: Database, box: SecretBox) -> list[str]:
    """Names of connections whose secrets the first key alone cannot decrypt (should be none after a rotation)."""
    with db.read() as session:
        return [
            c.name for c in session.scalars(select(Connection)) if not box.decrypts_with_primary_only(c.secret_values)
        ]


def rotate_key_file(db: Database, box: SecretBox, new_key: str) -> int:
    """Key-file rotation: add ``new_key`` in front, re-encrypt everything, then drop the old keys.

    If the process dies in between, the file still holds every key, so nothing becomes unreadable.
    """
    old = box.source.keys(reload=True)
    box.source.write([new_key.encode(), *old])
    count = reencrypt_all(db, box)
    if stale_connections(db, box):  # a write that raced the pass with an old key
        count = reencrypt_all(db, box)
    box.source.write([new_key.encode()])
    logger.info("secret key rotated connections=%d", count)
    return count
