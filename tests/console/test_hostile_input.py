"""NUL characters in any console page's path, query string or form are a 422 in the one error shape, never a 500.

PostgreSQL cannot hold or compare against a NUL (the Alerts and Investigators searches once answered 500); the
console reads plain strings, so one guard in front of every console route refuses them. The walk covers every
route of the console router, so a new page is checked as soon as it exists.
"""

from __future__ import annotations

import re
import uuid

from fastapi.routing import iter_route_contexts

from tests.support.harness import Harness
from tests.support.signin import sign_in


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", str(uuid.uuid4()), path)


def assert_refused(response: object, field: str) -> None:
    status = getattr(response, "status_code", None)
    body = response.json()  # type: ignore[attr-defined]
    assert status == 422, (field, status, body)
    assert body["error"]["code"] == "validation_error"
    assert [d["field"] for d in body["error"]["details"]] == [field]


def test_nul_anywhere_in_a_console_request_is_a_422(harness: Harness) -> None:
    csrf = sign_in(harness, "nul@vigil.test")("/alerts")
    harness.add_org("ACME")
    routes = [(str(c.path), set(c.methods or {"GET"})) for c in iter_route_contexts(harness.app.routes)]
    console = [(path, methods) for path, methods in routes if not path.startswith("/serviceapi")]
    gets = [path for path, methods in console if "GET" in methods]
    posts = [path for path, methods in console if methods & {"POST", "PUT", "PATCH", "DELETE"}]
    assert len(gets) > 20 and len(posts) > 10  # the walk sees the whole console
    for path in gets:
        assert_refused(harness.client.get(concrete(path), params={"q": "a\x00b"}), "query.q")
    for path in posts:
        form = {"csrf_token": csrf, "name": "Acme\x00", "comment": "fine"}
        assert_refused(harness.client.post(concrete(path), data=form), "form.name")
    assert_refused(harness.client.get("/alerts/ACME-CLOUDFLARE-1%00"), "path")
    # A raw NUL byte (not percent-encoded) in a form body is refused the same way.
    raw = harness.client.post(
        "/cases", content=b"name=a\x00b", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert_refused(raw, "form.name")
    # Without the NUL the same searches work on both databases.
    for path in ("/alerts", "/cases", "/investigators"):
        assert harness.client.get(path, params={"q": "a b"}).status_code == 200
