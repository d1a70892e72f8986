"""Secret-key rotation: re-encrypt every connection's secrets, and every organization's AI model key, under the
newest key."""

from __future__ import annotations

import logging

from cryptography.fernet import InvalidToken
from sqlalchemy import select, text

from vigil.db.session import Database
from vigil.integrations.models import Connection
from vigil.integrations.secrets import SecretBox, SecretsUndecryptable
from vigil.orgs.models import Organization

logger = logging.getLogger("vigil.secrets")


def reencrypt_all(db: Database, box: SecretBox) -> int:
    """Re-encrypt every connection's secrets and every organization's AI model key under the first configured key,
    in one transaction; returns how many connections changed (the organizations' keys are logged).

    On PostgreSQL both tables are locked against concurrent writers for the pass; SQLite's write lock does that.
    """
    with db.write() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(text("LOCK TABLE connections IN SHARE ROW EXCLUSIVE MODE"))
            session.execute(text("LOCK TABLE organizations IN SHARE ROW EXCLUSIVE MODE"))
        count = 0
        for connection in session.scalars(select(Connection)):
            connection.secret_values = _rotated(box, connection.secret_values, f"Connection '{connection.name}'")
            count += 1
        model_keys = 0
        for organization in session.scalars(select(Organization).where(Organization.ai_api_key.is_not(None))):
            what = f"The AI model key of organization {organization.organization_code}"
            organization.ai_api_key = _rotated(box, organization.ai_api_key or "", what)
            model_keys += 1
        logger.info("secrets re-encrypted connections=%d organization_model_keys=%d", count, model_keys)
        return count


def _rotated(box: SecretBox, token: str, what: str) -> str:
    """`token` under the newest key; one that no configured key decrypts stops the whole rotation unchanged."""
    try:
        return box.rotate(token)
    except InvalidToken:
        raise SecretsUndecryptable(
            f"{what} cannot be decrypted with any configured key; rotation stopped and nothing was changed."
        ) from None


def stale_connections(db: Database, box: SecretBox) -> list[str]:
    """What the first key alone cannot decrypt (should be nothing after a rotation): connection names, and
    "organization <CODE> (AI model key)" for an organization's model key."""
    with db.read() as session:
        connections = [
            c.name for c in session.scalars(select(Connection)) if not box.decrypts_with_primary_only(c.secret_values)
        ]
        organizations = [
            f"organization {o.organization_code} (AI model key)"
            for o in session.scalars(select(Organization).where(Organization.ai_api_key.is_not(None)))
            if o.ai_api_key is not None and not box.decrypts_with_primary_only(o.ai_api_key)
        ]
        return connections + organizations


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
