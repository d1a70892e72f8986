"""Give an organization a fixed playbook for an alert type before its first alert (instead of a drafted one)."""

from __future__ import annotations

import uuid

from vigil.db.session import Database
from vigil.orgs.service import get_organization_by_code
from vigil.playbooks import service as playbooks
from vigil.playbooks.schemas import PlaybookDefinition


def install_playbook(
    db: Database, organization_code: str, alert_provider: str, alert_type: str, definition: PlaybookDefinition
) -> uuid.UUID:
    with db.write() as session:
        organization = get_organization_by_code(session, organization_code)
        assert organization is not None, organization_code
        ref = playbooks.find_or_create(
            session,
            organization_uuid=organization.organization_uuid,
            organization_code=organization.organization_code,
            alert_provider=alert_provider,
            alert_type=alert_type,
            definition=definition,
            actor="test",
        )
        assert ref is not None
        return ref.playbook_uuid
