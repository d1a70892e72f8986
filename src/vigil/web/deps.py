"""FastAPI dependencies shared by routers: database, settings, and the authenticated principal."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from vigil.alerts.intake import IntakeWriter
from vigil.auth import service as auth_service
from vigil.auth.ratelimit import TokenBucketLimiter
from vigil.auth.schemas import Principal
from vigil.db.session import Database
from vigil.investigations.engine import Engine
from vigil.settings import Settings


def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def presented_api_key(request: Request) -> str | None:
    """The key from `Authorization: Bearer` or the seed's `Cookie: Session=` (quoted or not)."""
    authorization = request.headers.get("authorization", "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    session_cookie = request.cookies.get("Session")
    if session_cookie:
        return session_cookie.strip().strip('"')
    return None


def get_principal(request: Request, db: Annotated[Database, Depends(get_db)]) -> Principal:
    principal = auth_service.authenticate(db, presented_api_key(request))
    limiter: TokenBucketLimiter = request.app.state.rate_limiter
    limiter.acquire(principal.actor_uuid)
    return principal


def get_intake(request: Request) -> IntakeWriter:
    intake: IntakeWriter = request.app.state.intake
    return intake


def get_engine(request: Request) -> Engine | None:
    """The in-process investigation engine, if this process runs one."""
    engine: Engine | None = request.app.state.engine
    return engine


DbDep = Annotated[Database, Depends(get_db)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
EngineDep = Annotated["Engine | None", Depends(get_engine)]
IntakeDep = Annotated[IntakeWriter, Depends(get_intake)]
