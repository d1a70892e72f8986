"""What an integration tells the analyst: the lookups it offers, how to read what its skills return, and the
containment that uses its own product.

A vendor folder declares one `AnalystKnowledge` as ``KNOWLEDGE`` in its ``analyst.py``; the built-in analyst
discovers it the way the catalog discovers skills, so adding a vendor (its analyst knowledge included) is
adding its folder. Where a vendor's data is of a kind the analyst already reasons about (EDR event rows, an
asset record, alerts on an asset) the folder only maps its field names onto that kind, as a Sigma processing
pipeline maps a backend's columns; where the meaning is the vendor's own (an audit log's semantics, a finding
taxonomy) it supplies a reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from vigil.core.entities import Entities, EntityKind
from vigil.evidence.sigma import SigmaAlerts, SigmaMapping
from vigil.evidence.signals import AlertReader, SkillReader


class Category(StrEnum):
    """What kind of alert this is; picks the playbook shape and the recommended actions."""

    IDENTITY_SIGNIN = "identity_signin"
    ENDPOINT_MALWARE = "endpoint_malware"
    CLOUD_CREDENTIALS = "cloud_credentials"
    DATA_EXFILTRATION = "data_exfiltration"
    EDGE_WAF_CHANGE = "edge_waf_change"
    ACCOUNT_CHANGE = "account_change"
    PHISHING = "phishing"
    GENERIC = "generic"


class Lookup(StrEnum):
    """What a lookup finds out, whichever vendor answers it: the analyst drafts a playbook by these."""

    MACHINE_DETAILS = "machine_details"
    MACHINE_ALERTS = "machine_alerts"
    MACHINE_ACTIVITY = "machine_activity"
    HASH_PREVALENCE = "hash_prevalence"
    IP_ON_ENDPOINTS = "ip_on_endpoints"
    DOMAIN_ON_ENDPOINTS = "domain_on_endpoints"
    ACTOR_CHANGES = "actor_changes"
    RECENT_CHANGES = "recent_changes"
    SECURITY_POSTURE = "security_posture"
    USER_ACCOUNT = "user_account"
    USER_FINDINGS = "user_findings"


#: Inputs of a lookup for an alert's entities, or None when the alert lacks what the lookup needs.
LookupInputs = Callable[[Entities], dict[str, str] | None]


@dataclass(frozen=True)
class LookupPlan:
    """One step a drafted playbook may take: the skill that answers `purpose`, named as the step shows it.

    Template convention (shared with the engine, see docs/analyst.md): an input that needs an entity renders
    to the empty string when a later alert of the same type lacks it, and the engine skips a step any of whose
    inputs rendered empty. So every input is either a constant or guarded by the entity it needs.
    """

    purpose: Lookup
    name: str
    skill: str
    inputs: LookupInputs


def first(kind: EntityKind) -> str:
    """Template for the first entity of a kind, empty when the alert has none."""
    return f"{{{{ entities.{kind.value}[0] if entities.{kind.value} else '' }}}}"


def guarded(kind: EntityKind, body: str) -> str:
    """Template rendering `body` (which may use ``VALUE``) only when the alert has an entity of `kind`."""
    value = f"{{{{ entities.{kind.value}[0] }}}}"
    return f"{{% if entities.{kind.value} %}}{body.replace('VALUE', value)}{{% endif %}}"


def when(kind: EntityKind, inputs: dict[str, str]) -> LookupInputs:
    """Constant inputs for alerts that have an entity of `kind`."""
    return lambda entities: inputs if entities.of(kind) else None


def always(inputs: dict[str, str]) -> LookupInputs:
    return lambda _entities: inputs


@dataclass(frozen=True)
class EventRows:
    """Process, file and network events (an EDR's query results), by the vendor's column names."""

    text_columns: tuple[str, ...]
    """Columns whose text is read for behaviours, in this order: command lines, parents, files, URLs."""
    process: str
    """The process that acted (its file name): a script host reaching the internet is worth a look."""
    device: str
    account: str
    remote_ip: str
    remote_url: str
    sent_bytes: tuple[str, ...]
    machine: tuple[str, ...]
    """Columns naming the machine a row comes from: the same artefact elsewhere means spread."""
    envelopes: tuple[str, ...]
    """Keys the rows may arrive under, so a citation points at the right one."""
    sigma: SigmaMapping | None = None
    """Which Sigma log source a row is and its columns by Sigma field name: Sigma rules run over mapped rows."""


@dataclass(frozen=True)
class AssetRecords:
    """A machine as the vendor describes it: its name, the tags administrators gave it, risk and value."""

    product: str
    """How findings name the source ("<product> rates host-1's risk High")."""
    name: tuple[str, ...]
    tags: str
    risk: str
    value: str
    envelope: str


@dataclass(frozen=True)
class AlertRecords:
    """The vendor's alerts on the same asset, among them possibly its own later verdict on this alert."""

    product: str
    id: str
    severity: str
    title: str
    verdicts: tuple[str, ...]
    """Fields holding the vendor's classification of an alert, most specific last."""
    status: str
    envelope: str


#: How the analyst reads one skill's output: a mapping onto a kind it knows, or the vendor's own reader.
Reading = EventRows | AssetRecords | AlertRecords | SkillReader


@dataclass(frozen=True)
class AnalystKnowledge:
    """Everything one integration folder tells the analyst."""

    lookups: tuple[LookupPlan, ...] = ()
    """Ordered: among plans of one purpose, the first the organization can run is drafted."""
    readings: Mapping[str, Reading] = field(default_factory=dict)
    """Skill id -> how its output is read."""
    alert_readers: tuple[AlertReader, ...] = ()
    """Readers of alerts in the vendor's own format (run on every alert: they find their format or nothing)."""
    containment: Mapping[Category, tuple[str, ...]] = field(default_factory=dict)
    """Per category, the containment steps in this product, recommended when the investigation used it."""
    counted_once: frozenset[str] = frozenset()
    """Rule ids of this folder's readers that describe one fact whichever source shows it."""
    undeniable: frozenset[str] = frozenset()
    """Rule ids of behaviours a person's "yes, that was me" cannot explain."""
    sigma_alerts: tuple[SigmaAlerts, ...] = ()
    """Where the vendor's own alert format carries records Sigma rules describe (its process evidence)."""

    @property
    def skills(self) -> frozenset[str]:
        """Every skill this knowledge names."""
        return frozenset({plan.skill for plan in self.lookups} | set(self.readings))
