"""Reading Slack's interaction payloads defensively: any part may be missing or of another type."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def first_action(payload: Mapping[str, Any]) -> dict[str, Any]:
    actions = payload.get("actions")
    return as_object(actions[0]) if isinstance(actions, list) and actions else {}


def interaction_channel(payload: Mapping[str, Any]) -> str:
    """The channel the pressed message is in (``channel.id``, else the container's ``channel_id``)."""
    channel = as_object(payload.get("channel"))
    container = as_object(payload.get("container"))
    return str(channel.get("id") or container.get("channel_id") or "")
