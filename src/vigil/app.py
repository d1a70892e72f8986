"""Builds the FastAPI application: API, console, health, middleware and error mapping."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from vigil import __version__
from vigil.alerts.intake import IntakeLimits, IntakeWriter
from vigil.alerts.router import router as alerts_router
from vigil.auth.known_keys import KnownKeys
from vigil.auth.ratelimit import TokenBucketLimiter
from vigil.cases.router import router as cases_router
from vigil.console.api_docs import router as api_docs_router
from vigil.console.errors import console_error_response
from vigil.console.router import CONSOLE_STATIC_DIR
from vigil.console.router import router as console_router
from vigil.console.security import ConsoleSigner, SignInThrottle
from vigil.db.session import Database
from vigil.facts.router import router as facts_router
from vigil.integrations.catalog import vendor_modules
from vigil.integrations.http import OutboundClient
from vigil.integrations.policy import OutboundPolicy
from vigil.integrations.router import router as integrations_router
from vigil.integrations.secrets import SecretBox
from vigil.integrations.service import endpoints_from_settings
from vigil.investigations.checkpoints import WorkflowWaker
from vigil.investigations.engine import Engine
from vigil.orgs.router import router as orgs_router
from vigil.playbooks.router import router as playbooks_router
from vigil.settings import Settings, get_settings
from vigil.web.errors import install_error_handlers
from vigil.web.health import router as health_router
from vigil.web.middleware import BodyGuardMiddleware, RequestContextMiddleware
from vigil.web.security_headers import SecurityHeadersMiddleware


def create_app(
    settings: Settings | None = None, db: Database | None = None, *, engine: Engine | None = None
) -> FastAPI:
    """The app does not migrate: `vigil serve` and `vigil db upgrade` do, before it starts.

    With an `engine`, this process also runs investigations (the in-process worker of `vigil serve`).
    """
    settings = settings or get_settings()
    database = db or Database(settings)

    @asynccontextmanager
    async def lifespan(running: FastAPI) -> AsyncIterator[None]:
        if engine is not None:
            await asyncio.to_thread(engine.start)
        try:
            yield
        finally:
            if engine is not None:
                await asyncio.to_thread(engine.stop)
            await asyncio.to_thread(running.state.intake.close)
            await running.state.outbound.aclose()
            waker.close()
            if db is None:
                database.dispose()

    app = FastAPI(
        title="Vigil",
        version=__version__,
        description="Alert intake and investigation API. Authenticate with `Cookie: Session=<API_KEY>` "
        "or `Authorization: Bearer <API_KEY>`. Errors always have the shape "
        '`{"error": {"code", "message", "details"}}`.',
        lifespan=lifespan,
        docs_url=None,  # served from vendored assets by vigil.console.api_docs, not from a CDN
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = database
    app.state.known_keys = KnownKeys()
    app.state.intake = IntakeWriter(
        database,
        app.state.known_keys,
        IntakeLimits(
            max_content_bytes=settings.max_alert_content_bytes,
            idempotency_ttl_seconds=settings.idempotency_ttl_seconds,
        ),
    )
    app.state.rate_limiter = TokenBucketLimiter(settings.rate_limit_per_second, settings.rate_limit_burst)
    app.state.secret_box = SecretBox.from_settings(settings)
    app.state.endpoints = endpoints_from_settings(settings)
    # one pool, token cache and limiter set; the outbound-URL policy's allow-list comes from these settings
    app.state.outbound = OutboundClient(policy=OutboundPolicy.from_settings(settings))
    app.state.engine = engine
    waker = WorkflowWaker(settings.workflow_database_url)  # chat answers wake waiting checkpoints through it
    app.state.waker = waker

    app.state.console_signer = ConsoleSigner(app.state.secret_box)
    app.state.signin_throttle = SignInThrottle()

    install_error_handlers(app, page_renderer=console_error_response)
    app.add_middleware(
        BodyGuardMiddleware,
        limit_for_path=lambda path: (
            settings.max_batch_body_bytes if path.endswith("/alerts/batch") else settings.max_body_bytes
        ),
    )
    app.add_middleware(RequestContextMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)  # outermost: rejections and errors get the headers too

    app.include_router(api_docs_router)
    app.include_router(health_router)
    app.include_router(orgs_router)
    app.include_router(facts_router)
    app.include_router(alerts_router)
    app.include_router(cases_router)
    app.include_router(playbooks_router)
    app.include_router(integrations_router)
    for webhooks in vendor_modules("webhooks"):  # each vendor's inbound webhooks (a chat product's E4/E5)
        app.include_router(webhooks.router)
    app.include_router(console_router)
    app.mount("/static", StaticFiles(directory=CONSOLE_STATIC_DIR), name="static")
    return app
