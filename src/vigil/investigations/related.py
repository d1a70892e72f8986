"""The internal skill "Look up related alerts": same organization, shared entities, last 30 days."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from vigil.alerts.models import Alert
from vigil.db.base import epoch_now
from vigil.investigations.entities import Entities, extract_entities

RELATED_SKILL_ID = "Look up related alerts"
WINDOW_SECONDS = 30 * 86400
MAX_CANDIDATES = 500
MAX_RESULTS = 25
_SHARED_KINDS = ("ips", "domains", "md5s", "sha1s", "sha256s", "emails", "users", "hosts", "device_ids")


def related_alerts(session: Session, alert_uuid: uuid.UUID, entities: Entities) -> dict[str, Any]:
    """Alerts of the same organization in the last 30 days sharing at least one entity with this one.

    Scans the newest 500 alerts of the window; the count says how many matched, the list is capped.
    """
    alert = session.scalar(select(Alert).where(Alert.alert_uuid == alert_uuid))
    if alert is None:
        return {"count": 0, "alerts": []}
    mine = {kind: set(getattr(entities, kind)) for kind in _SHARED_KINDS}
    candidates = session.scalars(
        select(Alert)
        .where(
            Alert.organization_uuid == alert.organization_uuid,
            Alert.alert_uuid != alert.alert_uuid,
            Alert.created_at >= epoch_now() - WINDOW_SECONDS,
        )
        .order_by(Alert.id.desc())
        .limit(MAX_CANDIDATES)
    )
    matches: list[dict[str, Any]] = []
    for other in candidates:
        theirs = extract_entities(other.alert_content)
        shared = {kind: sorted(mine[kind] & set(getattr(theirs, kind))) for kind in _SHARED_KINDS}
        shared = {kind: values for kind, values in shared.items() if values}
        if shared:
            matches.append(
                {
                    "alert_id": other.alert_id,
                    "alert_type": other.alert_type,
                    "alert_provider": other.alert_provider,
                    "created_at": other.created_at,
                    "case_id": other.case_id,
                    "shared": shared,
                }
            )
    return {"count": len(matches), "alerts": matches[:MAX_RESULTS]}
