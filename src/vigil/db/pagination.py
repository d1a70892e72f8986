"""Keyset pagination on an increasing integer id, newest first, with opaque cursors.

Deep pages cost the same as the first (no OFFSET scans), which matters for the alert list.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, TypeVar

from sqlalchemy import Select
from sqlalchemy.orm import InstrumentedAttribute, Session

from vigil.errors import ValidationFailed
from vigil.input_types import INT64_MAX, INT64_MIN

T = TypeVar("T")


def newest_first_page(
    session: Session, query: Select[Any], id_column: InstrumentedAttribute[int], cursor: str | None, limit: int
) -> tuple[list[Any], str | None]:
    """Rows of `query` ordered by `id_column` descending, after `cursor`; and the next page's cursor."""
    query = query.order_by(id_column.desc()).limit(limit + 1)
    if cursor:
        query = query.where(id_column < decode_cursor(cursor))
    rows = list(session.scalars(query))
    next_cursor = encode_cursor(getattr(rows[limit - 1], id_column.key)) if len(rows) > limit else None
    return rows[:limit], next_cursor


def encode_cursor(last_id: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"before_id": last_id}).encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))["before_id"]
    except (binascii.Error, ValueError, KeyError, TypeError) as error:
        raise ValidationFailed(
            "The cursor is not valid; pass the next_cursor of a previous page.", code="invalid_cursor"
        ) from error
    if not isinstance(value, int) or not INT64_MIN <= value <= INT64_MAX:  # ids are BIGINT
        raise ValidationFailed("The cursor is not valid.", code="invalid_cursor")
    return value
