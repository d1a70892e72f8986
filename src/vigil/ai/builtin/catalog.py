"""The read-only lookups the built-in analyst knows how to use, as step templates over `alert` and `entities`.

Template convention (shared with the engine, see docs/analyst.md): an input that needs an entity renders to
the empty string when a later alert of the same type lacks it, and the engine skips a step any of whose
inputs rendered empty. So every input here is either a constant or guarded by the entity it needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from vigil.core.entities import Entities, EntityKind


class SkillId(StrEnum):
    """Skill ids exactly as the integration catalog declares them."""

    RELATED_ALERTS = "vigil.related_alerts"
    LIST_MACHINES = "microsoft_defender.list_machines"
    FETCH_ALERTS = "microsoft_defender.fetch_alerts"
    HUNTING_QUERY = "microsoft_defender.run_advanced_hunting_query"
    EDGE_DETECTION_AUDIT_LOGS = "cloudflare.edge_get_account_audit_logs_for_detections"
    EDGE_AUDIT_LOGS = "cloudflare.get_edge_audit_logs"
    EDGE_ZONE_DETAILS = "cloudflare.get_edge_zone_details"
    EDGE_INSIGHTS = "cloudflare.get_edge_security_center_insights"
    FIND_ACCOUNT = "push_security.find_account_by_email"
    LIST_ACCOUNTS = "push_security.list_accounts"
    SECURITY_FINDINGS = "push_security.get_security_findings_by_email"
    SEND_CHAT_MESSAGE = "slack.send_chat_message"


def first(kind: EntityKind) -> str:
    """Template for the first entity of a kind, empty when the alert has none."""
    return f"{{{{ entities.{kind.value}[0] if entities.{kind.value} else '' }}}}"


def guarded(kind: EntityKind, body: str) -> str:
    """Template rendering `body` (which may use ``VALUE``) only when the alert has an entity of `kind`."""
    value = f"{{{{ entities.{kind.value}[0] }}}}"
    return f"{{% if entities.{kind.value} %}}{body.replace('VALUE', value)}{{% endif %}}"


@dataclass(frozen=True)
class LookupPlan:
    """One candidate step: which skills can do it (first available wins) and the inputs it needs."""

    name: str
    skills: tuple[SkillId, ...]
    inputs: Callable[[Entities], dict[str, str] | None]
    """Inputs for these entities, or None when the alert lacks what the lookup needs."""


def _when(kind: EntityKind, inputs: dict[str, str]) -> Callable[[Entities], dict[str, str] | None]:
    return lambda entities: inputs if entities.of(kind) else None


def _always(inputs: dict[str, str]) -> Callable[[Entities], dict[str, str] | None]:
    return lambda _entities: inputs


def _machine_inputs(entities: Entities) -> dict[str, str] | None:
    """Identify the machine by the most precise identifier the alert has: device id, then host, then IP."""
    if entities.device_ids:
        return {"machine_id": first(EntityKind.DEVICE_IDS)}
    if entities.hosts:
        return {"hostname": first(EntityKind.HOSTS)}
    if entities.ips:
        return {"ip": first(EntityKind.IPS)}
    return None


_HASH_COLUMNS = ((EntityKind.SHA256S, "SHA256"), (EntityKind.SHA1S, "SHA1"), (EntityKind.MD5S, "MD5"))


def _hash_hunt_inputs(entities: Entities) -> dict[str, str] | None:
    """KQL over the strongest hash present; hashes are validated hex, so interpolating them is safe."""
    for kind, column in _HASH_COLUMNS:
        if entities.of(kind):
            body = f'DeviceFileEvents | where {column} == "VALUE" | take 50'
            return {"query": guarded(kind, body)}
    return None


def _actor_audit_inputs(entities: Entities) -> dict[str, str] | None:
    """Cloudflare changes by the person in the alert: by e-mail when known, else by source IP."""
    if entities.emails:
        return {"actor_email": first(EntityKind.EMAILS), "per_page": "50"}
    if entities.ips:
        return {"actor_ip": first(EntityKind.IPS), "per_page": "50"}
    return None


RELATED_ALERTS = LookupPlan("Look up related alerts", (SkillId.RELATED_ALERTS,), _always({}))
MACHINE_DETAILS = LookupPlan("Defender: machine details", (SkillId.LIST_MACHINES,), _machine_inputs)
MACHINE_ALERTS = LookupPlan(
    "Defender: other alerts on the machine",
    (SkillId.FETCH_ALERTS,),
    _when(EntityKind.DEVICE_IDS, {"machine_id": first(EntityKind.DEVICE_IDS), "top": "50"}),
)
HASH_PREVALENCE = LookupPlan("Defender: machines with the file hash", (SkillId.HUNTING_QUERY,), _hash_hunt_inputs)
IP_ON_ENDPOINTS = LookupPlan(
    "Defender: endpoint connections with the IP",
    (SkillId.HUNTING_QUERY,),
    _when(
        EntityKind.IPS,
        {"query": guarded(EntityKind.IPS, 'DeviceNetworkEvents | where RemoteIP == "VALUE" | take 50')},
    ),
)
DOMAIN_ON_ENDPOINTS = LookupPlan(
    "Defender: endpoint connections to the domain",
    (SkillId.HUNTING_QUERY,),
    _when(
        EntityKind.DOMAINS,
        {"query": guarded(EntityKind.DOMAINS, 'DeviceNetworkEvents | where RemoteUrl has "VALUE" | take 50')},
    ),
)
ACTOR_EDGE_CHANGES = LookupPlan(
    "Cloudflare: changes by the actor", (SkillId.EDGE_DETECTION_AUDIT_LOGS,), _actor_audit_inputs
)
RECENT_EDGE_CHANGES = LookupPlan(
    "Cloudflare: recent account changes", (SkillId.EDGE_AUDIT_LOGS,), _always({"per_page": "50"})
)
EDGE_INSIGHTS = LookupPlan("Cloudflare: open security insights", (SkillId.EDGE_INSIGHTS,), _always({"per_page": "25"}))


def _machine_activity_inputs(entities: Entities) -> dict[str, str] | None:
    """What ran on the machine and where it connected: processes, parents, command lines, remote addresses."""
    tables = "union DeviceProcessEvents, DeviceNetworkEvents, DeviceFileEvents"
    if entities.hosts:
        return {"query": guarded(EntityKind.HOSTS, f'{tables} | where DeviceName startswith "VALUE" | take 200')}
    if entities.device_ids:
        return {"query": guarded(EntityKind.DEVICE_IDS, f'{tables} | where DeviceId == "VALUE" | take 200')}
    return None


MACHINE_ACTIVITY = LookupPlan("Defender: activity on the machine", (SkillId.HUNTING_QUERY,), _machine_activity_inputs)
USER_FINDINGS = LookupPlan(
    "Push Security: findings for the user",
    (SkillId.SECURITY_FINDINGS,),
    _when(EntityKind.EMAILS, {"email": first(EntityKind.EMAILS)}),
)
IDENTITY_ACCOUNT = LookupPlan(
    "Push Security: account of the user",
    (SkillId.FIND_ACCOUNT, SkillId.LIST_ACCOUNTS),
    _when(EntityKind.EMAILS, {"email": first(EntityKind.EMAILS)}),
)
