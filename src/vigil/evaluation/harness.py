"""A Vigil app on a private database, driven in-process through Starlette's TestClient: what `vigil eval` runs the
scenarios against (the test suite's harness adds its helpers on top)."""

from __future__ import annotations

from types import TracebackType

from fastapi.testclient import TestClient

from vigil.app import create_app
from vigil.auth import service as auth_service
from vigil.auth.schemas import ApiKeyCreated
from vigil.db.session import Database
from vigil.investigations.engine import build_engine
from vigil.orgs import service as orgs_service
from vigil.settings import Settings


class Harness:
    """With `engine=True` the app also runs the investigation engine (started by the TestClient)."""

    def __init__(self, settings: Settings, *, engine: bool = False) -> None:
        self.settings = settings
        self.db = Database(settings)
        self.engine = build_engine(settings, self.db, role="test") if engine else None
        self.app = create_app(settings, self.db, engine=self.engine)
        self.client = TestClient(self.app, raise_server_exceptions=False)

    def __enter__(self) -> Harness:
        self.client.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.client.__exit__(exc_type, exc, tb)
        self.db.dispose()

    def add_org(self, code: str, name: str | None = None) -> None:
        with self.db.write() as session:
            orgs_service.create_organization(session, code, name)

    def add_key(self, *orgs: str, name: str = "test key", expires_in_days: int | None = None) -> ApiKeyCreated:
        with self.db.write() as session:
            return auth_service.create_api_key(
                session, name=name, created_by="test", organization_codes=orgs, expires_in_days=expires_in_days
            )

    def revoke(self, key: ApiKeyCreated) -> None:
        with self.db.write() as session:
            auth_service.revoke_api_key(session, str(key.key_uuid))
