"""The engine's view of an organization's connections: which integrations it has, and a skill context."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from vigil.db.base import epoch_now
from vigil.integrations.catalog import chat_integration_ids
from vigil.integrations.framework import Endpoints, SkillContext
from vigil.integrations.http import OutboundClient
from vigil.integrations.models import Connection
from vigil.integrations.secrets import SecretBox
from vigil.integrations.service import skill_context_for


@dataclass(frozen=True)
class ConnectionsResolver:
    box: SecretBox
    endpoints: Endpoints
    http: OutboundClient

    def connected_integrations(self, session: Session, organization_uuid: uuid.UUID) -> set[str]:
        """Integrations with at least one unexpired connection (what the AI may draft steps for)."""
        now = epoch_now()
        rows = session.execute(
            select(Connection.integration_id).where(
                Connection.organization_uuid == organization_uuid,
                (Connection.expires_at.is_(None)) | (Connection.expires_at > now),
            )
        )
        return {row[0] for row in rows}

    def authenticated_integrations(self, session: Session, organization_uuid: uuid.UUID) -> set[str]:
        """Integrations with an unexpired connection whose last Authenticate/Test succeeded.

        Chat checkpoints are drafted only then: the chat app must be set up for people's answers to arrive.
        """
        now = epoch_now()
        rows = session.execute(
            select(Connection.integration_id).where(
                Connection.organization_uuid == organization_uuid,
                Connection.last_test_ok.is_(True),
                (Connection.expires_at.is_(None)) | (Connection.expires_at > now),
            )
        )
        return {row[0] for row in rows}

    def chat_integration(self, session: Session, organization_uuid: uuid.UUID) -> str | None:
        """The integration the organization is asked through in chat: of its connections whose integration provides
        chat, the one that last tested OK, else the oldest (an expired one too, so asking says it expired)."""
        return session.scalar(
            select(Connection.integration_id)
            .where(
                Connection.organization_uuid == organization_uuid,
                Connection.integration_id.in_(sorted(chat_integration_ids())),
            )
            .order_by(Connection.last_test_ok.is_(True).desc(), Connection.created_at, Connection.name)
            .limit(1)
        )

    def skill_context(
        self, session: Session, organization_uuid: uuid.UUID, integration_id: str, connection_name: str | None
    ) -> SkillContext | None:
        return skill_context_for(
            session,
            organization_uuid,
            integration_id,
            connection_name,
            box=self.box,
            endpoints=self.endpoints,
            http=self.http,
        )

    def connection_name(self, session: Session, connection_uuid: uuid.UUID) -> str:
        connection = session.get(Connection, connection_uuid)
        return connection.name if connection is not None else str(connection_uuid)
