"""Durations as people read them, for timeline notes and console pages alike."""

from __future__ import annotations


def human_duration(seconds: int) -> str:
    """900 → "15 min", 5400 → "1 h 30 min", 45 → "45 s"."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else "", f"{secs} s" if secs else ""]
    return " ".join(part for part in parts if part) or "0 s"
