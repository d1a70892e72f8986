"""Evidence items as the engine records them, for the rule tests: a Defender hunting step, the facts step."""

from __future__ import annotations

from typing import Any

from vigil.ai.schemas import Evidence, EvidenceKind, EvidenceStatus
from vigil.evidence.facts import ORG_FACTS_SKILL_ID

HUNTING = "microsoft_defender.run_advanced_hunting_query"


def hunting(*rows: dict[str, Any], name: str = "Defender: activity on the machine") -> Evidence:
    """A successful advanced-hunting step that returned `rows`."""
    return Evidence(
        step_name=name,
        kind=EvidenceKind.SKILL,
        skill_id=HUNTING,
        status=EvidenceStatus.OK,
        output={"results": list(rows)},
    )


def facts(*recorded: dict[str, Any]) -> Evidence:
    """The engine's organization-facts step, with the active facts `recorded` (in `OrgFact.as_output` shape)."""
    return Evidence(
        step_name="Organization facts",
        kind=EvidenceKind.SKILL,
        skill_id=ORG_FACTS_SKILL_ID,
        status=EvidenceStatus.OK,
        output={"facts": list(recorded)},
    )
