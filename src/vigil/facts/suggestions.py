"""The fact that might explain why an analyst closed a case differently from the AI, offered from the case's own
subject entities so the next alert about them is right: an address the organization scans or egresses from, an
account that is a service account, or (when the AI called benign what was real) an account that matters more."""

from __future__ import annotations

from dataclasses import dataclass

from vigil.core.entities import Entities, EntityKind
from vigil.evidence.facts import FactKind

BENIGN = frozenset({"benign_true_positive", "false_positive"})
#: Per kind of entity: the facts that would explain benign activity of it.
EXPLAINS_BENIGN: dict[EntityKind, tuple[FactKind, ...]] = {
    EntityKind.IPS: (FactKind.AUTHORISED_SCANNER, FactKind.VPN_EGRESS, FactKind.OFFICE_NETWORK, FactKind.CI_NETWORK),
    EntityKind.USERS: (FactKind.SERVICE_ACCOUNT,),
    EntityKind.EMAILS: (FactKind.SERVICE_ACCOUNT,),
}
#: Per kind of entity: the facts that make real activity of it weigh more.
RAISES_STAKES: dict[EntityKind, tuple[FactKind, ...]] = {
    EntityKind.USERS: (FactKind.VIP_ACCOUNT,),
    EntityKind.EMAILS: (FactKind.VIP_ACCOUNT,),
}
#: At most this many values per kind of entity are offered (the alert's subjects, best first).
PER_KIND = 2


@dataclass(frozen=True)
class FactSuggestion:
    kind: FactKind
    value: str


def _subjects(entities: Entities, kind: EntityKind) -> list[str]:
    """The alert's own subjects of `kind`, or its first values when it marks none."""
    return (entities.subject(kind) or entities.of(kind))[:PER_KIND]


def suggest_facts(entities: Entities, *, disposition: str, ai_disposition: str) -> list[FactSuggestion]:
    """What to offer when the analyst's disposition differs from the AI's; nothing when they agree or are pending.

    A change window is always among them when the analyst found the activity benign (its reference and times are
    the organization's, so it comes without a value)."""
    if disposition == ai_disposition or "pending" in (disposition, ai_disposition):
        return []
    benign = disposition in BENIGN
    table = EXPLAINS_BENIGN if benign else RAISES_STAKES
    offered: list[FactSuggestion] = []
    for entity_kind, fact_kinds in table.items():
        for value in _subjects(entities, entity_kind):
            offered.extend(FactSuggestion(kind, value) for kind in fact_kinds)
    if benign:
        offered.append(FactSuggestion(FactKind.CHANGE_WINDOW, ""))
    return list(dict.fromkeys(offered))
