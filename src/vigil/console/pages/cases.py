"""Cases list and case detail (verdict, evidence, timeline, comments, status/assignee/disposition)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
