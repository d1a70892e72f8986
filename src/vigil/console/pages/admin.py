"""Administration: organizations, providers and API keys (admins only)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
