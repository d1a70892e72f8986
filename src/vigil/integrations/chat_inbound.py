"""Inbound chat deliveries, whichever product sends them: the ``?token=`` names a connection, and the request must
be signed by that connection's secret (its provider's ``verify``) before anything is parsed or stored.

Nothing here commits: a verified delivery goes to the ``ReceiveDelivery`` the HTTP edge hands in
(``investigations.flows.receive_chat_delivery``), which records it, applies its answers and wakes the waiting
playbooks after the commit. A product with its own event and interaction routes (E4/E5) uses ``verify`` and
records deliveries itself; a product whose deliveries are simply signed answers can use ``receive_answer`` as its
whole route.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vigil.db.session import Database
from vigil.errors import MalformedJSON, Unauthenticated, ValidationFailed
from vigil.integrations.catalog import chat_provider
from vigil.integrations.chat import ChatDelivery, ReceiveDelivery
from vigil.integrations.secrets import SecretBox, SecretsUndecryptable
from vigil.integrations.service import connection_by_webhook_token, connection_values, is_expired

logger = logging.getLogger("vigil.chat.inbound")


class ChatRequestUnverified(Unauthenticated):
    """401: the request cannot be shown to come from the chat application of a live connection."""

    code = "chat_request_unverified"

    def __init__(self, reason: str) -> None:
        super().__init__("The request could not be verified as coming from the chat application.")
        self.reason = reason


@dataclass(frozen=True)
class VerifiedConnection:
    connection_uuid: uuid.UUID
    organization_uuid: uuid.UUID


def verify(
    db: Database, box: SecretBox, integration_id: str, token: str | None, headers: Mapping[str, str], body: bytes
) -> VerifiedConnection:
    """The `integration_id` connection the token names, if the request is signed with its secret; else 401."""
    with db.read() as session:
        connection = connection_by_webhook_token(session, token or "")
        if connection is None or connection.integration_id != integration_id:
            raise _reject("unknown_token" if token else "missing_token", None)
        if is_expired(connection):
            raise _reject("connection_expired", connection.connection_uuid)
        try:
            values = connection_values(connection, box)
        except SecretsUndecryptable:
            raise _reject("secrets_undecryptable", connection.connection_uuid) from None
        verified = VerifiedConnection(connection.connection_uuid, connection.organization_uuid)
    failure = chat_provider(integration_id).verify(values, headers, body)
    if failure is not None:
        raise _reject(failure, verified.connection_uuid)
    return verified


def _reject(reason: str, connection_uuid: uuid.UUID | None) -> ChatRequestUnverified:
    logger.warning("chat request rejected reason=%s connection=%s", reason, connection_uuid or "-")
    return ChatRequestUnverified(reason)


def json_object(raw: bytes | str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise MalformedJSON(f"The {what} is not valid JSON.") from None
    if not isinstance(value, dict):
        raise ValidationFailed(f"The {what} must be a JSON object.")
    return value


def receive_answer(
    db: Database,
    box: SecretBox,
    receive: ReceiveDelivery,
    integration_id: str,
    kind: str,
    token: str | None,
    headers: Mapping[str, str],
    body: bytes,
) -> bool:
    """A signed JSON delivery that may carry an answer: verify, parse, hand to `receive`; True when it was one."""
    verified = verify(db, box, integration_id, token, headers, body)
    payload = json_object(body, "delivery")
    answer = chat_provider(integration_id).parse_answer(verified.connection_uuid, kind, payload)
    if answer is None:
        return False
    receive(lambda _session: ChatDelivery.carrying(answer))
    return True
