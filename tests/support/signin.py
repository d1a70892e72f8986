"""Signing a test client in to the console the way a browser does (form posts with CSRF), without a browser."""

from __future__ import annotations

import re
from collections.abc import Callable

from fastapi.testclient import TestClient

from tests.support.harness import Harness
from vigil.users import service as users_service
from vigil.users.schemas import Role

PASSWORD = "correct horse battery staple"


def csrf_token(client: TestClient, path: str) -> str:
    """The CSRF token of the form on the console page at `path`."""
    match = re.search(r'name="csrf_token" value="([^"]+)"', client.get(path).text)
    assert match, f"{path} has no CSRF field"
    return match.group(1)


def sign_in(
    harness: Harness, email: str, *, role: Role | None = Role.ADMIN, password: str = PASSWORD
) -> Callable[[str], str]:
    """Create the user (unless `role` is None: it exists already) and sign the harness's client in as them;
    returns a function giving the CSRF token of the form at a path, for the posts that follow."""
    if role is not None:
        with harness.db.write() as session:
            users_service.create_user(session, email=email, password=password, role=role)
    signed_in = harness.client.post(
        "/login",
        data={"email": email, "password": password, "csrf_token": csrf_token(harness.client, "/login")},
        follow_redirects=False,
    )
    assert signed_in.status_code == 303, signed_in.text
    return lambda path: csrf_token(harness.client, path)
