"""A hostile vendor on loopback that echoes the credentials it is sent, in every encoding a real one might.

It speaks Push Security's protocol (``x-api-key``; accounts) and Defender's (Entra ID token, then ``Bearer``
calls), so the real vendor clients talk to it unchanged. Error bodies repeat the key, its URL-encoding and its
base64, the client secret from the token request and the bearer token it issued; ``leak_in_data`` makes the
successful account listing carry them too (a record field echoing the key).
"""

from __future__ import annotations

import base64
import secrets
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vigil.integrations.fakes import FakeVendor, form_of

PUSH_KEY = "psk_echo_7Qm+z/4Lw=K9r&x2Vb#Tt5Hs!Np3Ye"
"""A key with characters that change under URL-encoding and JSON escaping."""
CLIENT_SECRET = "Ec~ho.client+secret/value_0123456789abcdef"
TENANT_ID = "11111111-2222-3333-4444-555555555555"
CLIENT_ID = "66666666-7777-8888-9999-000000000000"


def encodings(value: str) -> list[str]:
    """The forms an echo may take: as is, URL-encoded, base64."""
    return [value, quote(value, safe=""), base64.b64encode(value.encode()).decode()]


class EchoVendor(FakeVendor):
    """Accepts ``PUSH_KEY`` only when ``reject`` is False; Defender calls are always forbidden (403), echoing."""

    def __init__(self) -> None:
        super().__init__()
        self.reject = True
        self.leak_in_data = False
        self.issued: list[str] = []
        self.sent_secrets: list[str] = []

    def reset(self) -> None:
        super().reset()
        self.reject = True
        self.leak_in_data = False
        self.issued.clear()
        self.sent_secrets.clear()

    def echoed(self) -> list[str]:
        """Every string this fake has echoed so far, in every encoding (what must appear nowhere in Vigil)."""
        values = [PUSH_KEY, CLIENT_SECRET, *self.issued]
        return [form for value in values for form in encodings(value)]

    def routes(self) -> list[Route]:
        return [
            self.route("/v1/accounts", self._accounts, ["GET"]),
            self.route("/{tenant}/oauth2/v2.0/token", self._token, ["POST"]),
            self.route("/api/machines", self._machines, ["GET"]),
        ]

    @staticmethod
    def _echo(value: str) -> str:
        forms = encodings(value)
        return f"credential {forms[0]} (url {forms[1]}, base64 {forms[2]}) is not valid here"

    async def _accounts(self, request: Request) -> Response:
        key = request.headers.get("x-api-key", "")
        if self.reject or key != PUSH_KEY:
            return JSONResponse({"message": self._echo(key)}, status_code=401)
        account: dict[str, Any] = {"id": "d6a32ba5-0532-4a66-8137-48cdf409c901", "email": "john.hill@example.com"}
        if self.leak_in_data:
            account["appType"] = f"APP seen with key {key}"
        return JSONResponse({"result": [account], "paging": {"moreResults": False}})

    async def _token(self, request: Request) -> Response:
        form = await form_of(request)
        self.sent_secrets.append(form.get("client_secret", ""))
        token = "eyJ0eXAiOiJKV1Qi." + secrets.token_urlsafe(24)
        self.issued.append(token)
        return JSONResponse({"token_type": "Bearer", "expires_in": 3599, "access_token": token})

    async def _machines(self, request: Request) -> Response:
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        sent = self.sent_secrets[-1] if self.sent_secrets else ""
        message = f"{self._echo(bearer)}; app secret {sent}"
        return JSONResponse({"error": {"code": "Forbidden", "message": message}}, status_code=403)
