"""Investigators: playbooks list, detail and step editor."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
