"""Integrations: catalog search, Connections tab and Skills tab per integration."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
