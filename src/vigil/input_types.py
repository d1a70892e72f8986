"""Input types for every edge (request bodies, query and path parameters, headers): values the databases and the
idempotency hash can hold, or a 422 naming the field.

PostgreSQL refuses NUL in text and integers beyond its column widths; a lone UTF-16 surrogate (`"\\ud800"`, legal in
JSON) cannot be encoded as UTF-8 for hashing or storage. Rejecting them where input enters means no service, query
or hash downstream ever sees them, instead of each endpoint guarding for itself.
"""

from __future__ import annotations

from typing import Annotated, Any

from annotated_types import Interval
from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

INT32_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: Year 9999: anything later is a millisecond (or nanosecond) timestamp sent by mistake.
MAX_EPOCH_SECONDS = 253_402_300_799
#: Bounds of every Chat Checkpoint timeout: a playbook step's own, an organization's, the service-wide default.
MIN_CHECKPOINT_TIMEOUT_SECONDS = 5
MAX_CHECKPOINT_TIMEOUT_SECONDS = 7 * 24 * 3600


NUL_MESSAGE = "Text must not contain NUL (\\u0000) characters."


def has_control_characters(value: str) -> bool:
    """C0 controls or DEL: never part of a name, key or host, and not allowed in an HTTP header value."""
    return any(ord(c) < 32 or ord(c) == 127 for c in value)


def check_text(value: str) -> str:
    """`value` if storable and hashable as UTF-8 text; else a PydanticCustomError saying why (no NUL, no lone
    surrogate). ASCII text, the common case, costs one pass in C."""
    if "\x00" in value:
        raise PydanticCustomError("text_nul", NUL_MESSAGE)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise PydanticCustomError(
                "text_surrogate", "Text must not contain lone UTF-16 surrogates (\\ud800-\\udfff)."
            ) from None
    return value


def _text_before(value: Any) -> Any:
    # Before pydantic's own str validation, so a length-constrained field names the real cause too.
    return check_text(value) if isinstance(value, str) else value


#: A string PostgreSQL and SQLite can store and UTF-8 can encode: no NUL, no lone surrogate.
Text = Annotated[str, BeforeValidator(_text_before)]

#: An integer that fits a 64-bit (BIGINT) column.
Int64 = Annotated[int, Interval(ge=INT64_MIN, le=INT64_MAX)]

#: A positive integer that fits a 32-bit (INTEGER) column, e.g. a playbook version.
PositiveInt32 = Annotated[int, Interval(ge=1, le=INT32_MAX)]

#: Unix epoch seconds, UTC, from 1970 to the end of year 9999 (fits BIGINT; rejects milliseconds).
EpochSeconds = Annotated[int, Interval(ge=0, le=MAX_EPOCH_SECONDS)]
