"""The web console: server-rendered pages served by the same process as the API.

Every page module adds its own router here; the CSRF check covers all of them, so no form can forget it.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Depends
from fastapi.responses import RedirectResponse

from vigil.console.deps import IdentityDep, check_csrf
from vigil.console.pages import admin, alerts, cases, dashboard, facts, integrations, investigators, signin, users

CONSOLE_STATIC_DIR = Path(__file__).parent / "static"

router = APIRouter(include_in_schema=False, dependencies=[Depends(check_csrf)])


@router.get("/")
def home(identity: IdentityDep) -> RedirectResponse:
    return RedirectResponse("/dashboard", status_code=303)


for page in (signin, dashboard, alerts, cases, investigators, integrations, facts, admin, users):
    router.include_router(page.router)
