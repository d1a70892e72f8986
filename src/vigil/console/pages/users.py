"""Users page (admins): invite, roles, organizations, disable, reset password."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
