"""FastAPI dependencies shared by routers: database, settings, and the authenticated principal.

The ones that only read app state are `async def`: FastAPI runs a plain `def` dependency in its threadpool,
which costs a thread hand-off per dependency per request.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from vigil.alerts.intake import IntakeWriter
from vigil.auth import service as auth_service
from vigil.auth.known_keys import KnownKeys
from vigil.auth.ratelimit import TokenBucketLimiter
from vigil.auth.schemas import Principal
from vigil.db.session import Database
from vigil.integrations.chat import ReceiveDelivery
from vigil.investigations import flows
from vigil.investigations.engine import Engine
from vigil.settings import Settings


async def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


async def get_settings(request: Request) -> Settings:
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
    return _admitted(request, auth_service.authenticate(db, presented_api_key(request)))


@dataclass(frozen=True)
class IntakeContext:
    """What E1 and batch need, from one dependency: FastAPI's cost per dependency is a large share of a request
    this small, so the intake hot path pays it once."""

    writer: IntakeWriter
    principal: Principal
    engine: Engine | None


async def get_intake_context(request: Request) -> IntakeContext:
    """A key verified moments ago is recognised without a query (intake checks it again in the transaction that
    stores the alerts); any other key is verified as for every endpoint."""
    state = request.app.state
    presented = presented_api_key(request)
    known: KnownKeys = state.known_keys
    principal = known.get(presented) if presented else None
    if principal is None:
        principal = await run_in_threadpool(auth_service.authenticate, state.db, presented)
        known.remember(presented or "", principal)
    return IntakeContext(writer=state.intake, principal=_admitted(request, principal), engine=state.engine)


def _admitted(request: Request, principal: Principal) -> Principal:
    """Count the request against the caller's rate limit (429 when it is spent)."""
    limiter: TokenBucketLimiter = request.app.state.rate_limiter
    limiter.acquire(principal.actor_uuid)
    return principal


async def get_engine(request: Request) -> Engine | None:
    """The in-process investigation engine, if this process runs one."""
    engine: Engine | None = request.app.state.engine
    return engine


async def get_chat_receiver(request: Request) -> ReceiveDelivery:
    """What a chat provider's inbound route hands its verified deliveries to: recorded and applied in one
    transaction, then the waiting playbooks woken through this app's waker (`flows.receive_chat_delivery`)."""
    state = request.app.state
    return functools.partial(flows.receive_chat_delivery, state.db, state.waker)


DbDep = Annotated[Database, Depends(get_db)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
PrincipalDep = Annotated[Principal, Depends(get_principal)]
EngineDep = Annotated["Engine | None", Depends(get_engine)]
IntakeDep = Annotated[IntakeContext, Depends(get_intake_context)]
ChatReceiverDep = Annotated[ReceiveDelivery, Depends(get_chat_receiver)]
