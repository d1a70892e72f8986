"""The intake's memo of recently verified keys: expires, forgets refused keys, stays bounded."""

from __future__ import annotations

import uuid

from vigil.auth.known_keys import KnownKeys
from vigil.auth.schemas import Principal


def principal() -> Principal:
    return Principal(actor_uuid=uuid.uuid4(), name="k", all_organizations=True, organization_uuids=frozenset())


def test_a_key_is_recognised_until_its_ttl_passes() -> None:
    now = [0.0]
    known = KnownKeys(ttl_seconds=10, clock=lambda: now[0])
    caller = principal()
    known.remember("vgl_live_a", caller)
    now[0] = 9.9
    assert known.get("vgl_live_a") is caller
    assert known.get("vgl_live_b") is None
    now[0] = 10.0
    assert known.get("vgl_live_a") is None


def test_forget_drops_refused_keys_only() -> None:
    known = KnownKeys()
    kept, refused = principal(), principal()
    known.remember("vgl_live_a", kept)
    known.remember("vgl_live_b", refused)
    known.forget({refused.actor_uuid})
    assert known.get("vgl_live_a") is kept
    assert known.get("vgl_live_b") is None


def test_memo_never_grows_past_its_capacity() -> None:
    known = KnownKeys(capacity=3)
    for n in range(10):
        known.remember(f"vgl_live_{n}", principal())
    assert sum(known.get(f"vgl_live_{n}") is not None for n in range(10)) <= 3
    assert known.get("vgl_live_9") is not None
