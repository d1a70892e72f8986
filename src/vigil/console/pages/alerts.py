"""Alerts page (list, filters, live status) and alert detail."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
