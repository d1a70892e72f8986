"""What Cloudflare's skills tell the analyst: who changed what, from where, and whether it turned a control
down (rules C), in the account audit log, in the alerts that carry an audit entry, and in Security Center.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from vigil.core.entities import Entities, EntityKind
from vigil.evidence import records as read
from vigil.evidence.knowledge import AnalystKnowledge, Category, Lookup, LookupPlan, always, first
from vigil.evidence.signals import AlertFacts, Explains, Signal, SkillReader, StepOutput

DETECTION_AUDIT_LOGS = "cloudflare.edge_get_account_audit_logs_for_detections"
AUDIT_LOGS = "cloudflare.get_edge_audit_logs"
INSIGHTS = "cloudflare.get_edge_security_center_insights"

#: Words that make a Cloudflare audit entry a security-setting change.
SECURITY_TERMS = re.compile(
    r"waf|firewall|security_level|securitylevel|ruleset|ssl|tls|ddos|bot|access|rate_limit|ratelimit|token|api_key"
    r"|apikey|member|two_factor|2fa|dnssec|always_use_https|min_tls|browser_check|challenge|custom_hostname|proxied",
)
#: New values (or action words) that turn a security control down or off.
WEAKENING_VALUES = frozenset(
    {"off", "essentially_off", "disabled", "false", "0", "low", "allow", "bypass", "skip", "log", "none", "flexible"}
)
WEAKENING_ACTIONS = re.compile(r"delete|remove|disable|pause|revoke_2fa|downgrade")
SEVERAL = 2
CREDENTIAL_ACTIONS = re.compile(r"token|api_key|apikey|key_create|create_key|service_key|origin_ca")
ELEVATED_ROLES = re.compile(r"super administrator|administrator|admin|owner")
READ_ONLY = re.compile(r"read[ _-]?only")
#: Cloudflare's security levels, weakest first: moving left turns protection down.
SECURITY_LEVELS = ("off", "essentially_off", "low", "medium", "high", "under_attack")


def _entry_text(entry: dict[str, object]) -> str:
    return " ".join(
        (
            read.text(read.nested(entry, "action"), "type"),
            read.text(read.nested(entry, "resource"), "type"),
            json.dumps(read.nested(entry, "metadata"), sort_keys=True).lower(),
            json.dumps(entry.get("newValueJson") or entry.get("new_value_json") or {}, sort_keys=True).lower(),
        )
    )


def describe(entry: dict[str, object]) -> str:
    action = read.raw(read.nested(entry, "action"), "type") or "change"
    resource = read.raw(read.nested(entry, "resource"), "type")
    name = read.raw(read.nested(entry, "metadata"), "name")
    if name:
        resource = f"{resource} {name}".strip()
    new_value = read.raw(entry, "newValue") or read.raw(read.nested(entry, "metadata"), "value")
    actor = read.raw(read.nested(entry, "actor"), "email") or read.raw(read.nested(entry, "actor"), "ip")
    parts = [
        f"{action}",
        f"on {resource}" if resource else "",
        f"-> {new_value}" if new_value else "",
        f"by {actor}" if actor else "",
    ]
    return " ".join(part for part in parts if part)


@dataclass(frozen=True)
class ChangeFinding:
    rule: str
    points: float
    meaning: str
    index: int
    entry: dict[str, object]
    count: int


def assess(entries: list[dict[str, object]]) -> list[ChangeFinding]:
    """What a list of audit entries did that matters: controls turned down, credentials made, admins added."""
    found: list[ChangeFinding] = []
    for rule, points, meaning, test in (
        ("C2", 2.5, "turned a security control down or off", _weakens_security),
        ("C6", 1.5, "created an API token or key", _creates_credential),
        ("C7", 2.0, "added a member with an administrative role", _adds_admin),
        ("C12", 1.5, "gave an administrative role to an address outside the actor's own domain", _admin_to_outsider),
        ("C13", 1.5, "opened an Access application to everyone or removed its MFA requirement", _opens_access_policy),
        ("C15", 2.0, "pointed the domain's inbound mail (MX) at another host", _reroutes_mail),
    ):
        matches = [(index, entry) for index, entry in enumerate(entries) if test(entry)]
        if matches:
            index, entry = matches[0]
            found.append(ChangeFinding(rule, points, meaning, index, entry, len(matches)))
    return found


def audit_changes(attributed: bool) -> SkillReader:
    """Cloudflare audit entries; changes count fully only when the log is filtered to the alert's actor."""

    def rule(item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
        entries = read.records(item.output)
        changes = assess(entries)
        weight = 1.0 if attributed else 0.5
        signals = [
            Signal.from_step(
                item,
                change.rule,
                round(change.points * weight, 2),
                f"{change.count} Cloudflare change(s) {change.meaning}: {describe(change.entry)}",
                f"entries[{change.index}]",
                describe(change.entry),
                entities=_actor(change.entry),
            )
            for change in changes
        ]
        signals.extend(_several_weakened(item, changes))
        if attributed and entries and not signals:
            finding = f"The actor's {len(entries)} recent Cloudflare change(s) weaken no security setting"
            quote = "; ".join(describe(entry) for entry in entries[:3])
            signals.append(Signal.from_step(item, "C3", -1.0, finding, "entries", quote))
        return signals

    return rule


def _several_weakened(item: StepOutput, changes: list[ChangeFinding]) -> list[Signal]:
    """More than one control turned down at once is a campaign, not a tweak."""
    weakened = next((change for change in changes if change.rule == "C2"), None)
    if weakened is None or weakened.count < SEVERAL:
        return []
    finding = f"{weakened.count} security controls were turned down together"
    return [Signal.from_step(item, "C9", 1.0, finding, f"entries[{weakened.index}]", describe(weakened.entry))]


def external_actor(entry: dict[str, object]) -> str | None:
    """The actor's e-mail domain is not the zone's: a partner, a contractor, or someone who should not be there."""
    actor = read.raw(read.nested(entry, "actor"), "email").lower()
    zone = read.raw(read.nested(entry, "metadata"), "zone_name").lower()
    if "@" not in actor or not zone:
        return None
    domain = actor.rsplit("@", 1)[1]
    return None if domain == zone or domain.endswith("." + zone) or zone.endswith("." + domain) else actor


def _actor(entry: dict[str, object]) -> tuple[str, ...]:
    actor = read.raw(read.nested(entry, "actor"), "email")
    return (actor,) if actor else ()


def _weakens_security(entry: dict[str, object]) -> bool:
    return bool(SECURITY_TERMS.search(_entry_text(entry))) and is_weakening(entry)


def _action(entry: dict[str, object]) -> str:
    return read.text(read.nested(entry, "action"), "type")


def _resource(entry: dict[str, object]) -> str:
    return read.text(read.nested(entry, "resource"), "type")


def is_weakening(entry: dict[str, object]) -> bool:
    metadata = read.nested(entry, "metadata")
    new_value = read.text(entry, "newValue") or read.text(metadata, "value") or read.text(metadata, "new_value")
    old_value = read.text(entry, "oldValue")
    if new_value in SECURITY_LEVELS and old_value in SECURITY_LEVELS:
        return SECURITY_LEVELS.index(new_value) < SECURITY_LEVELS.index(old_value)
    old_json, new_json = entry.get("oldValueJson"), entry.get("newValueJson")
    if isinstance(new_json, dict) and new_json.get("enabled") is False:
        return not isinstance(old_json, dict) or old_json.get("enabled") is not False
    if (
        isinstance(new_json, dict)
        and isinstance(old_json, dict)
        and (old_json.get("proxied"), new_json.get("proxied"))
        == (
            True,
            False,
        )
    ):
        return True  # a record taken out of the proxy: the hostname no longer passes the WAF and DDoS protection
    if isinstance(new_json, dict) and isinstance(old_json, dict) and _opens_access(old_json, new_json):
        return True
    return new_value in WEAKENING_VALUES or bool(WEAKENING_ACTIONS.search(_action(entry)))


def _reroutes_mail(entry: dict[str, object]) -> bool:
    """An MX record now naming another mail host: the domain's inbound mail goes somewhere new (interception)."""
    old, new = entry.get("oldValueJson"), entry.get("newValueJson")
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    is_mx = str(new.get("type", "")).upper() == "MX" and str(old.get("type", "")).upper() == "MX"
    return is_mx and str(new.get("content", "")).lower() != str(old.get("content", "")).lower()


def _opens_access_policy(entry: dict[str, object]) -> bool:
    old, new = entry.get("oldValueJson"), entry.get("newValueJson")
    return isinstance(old, dict) and isinstance(new, dict) and _opens_access(old, new)


def _opens_access(old: dict[str, object], new: dict[str, object]) -> bool:
    """A Zero Trust Access policy that now lets everyone in, or requires less (an MFA requirement removed)."""
    everyone = "everyone" in json.dumps(new.get("include")) and "everyone" not in json.dumps(old.get("include"))
    old_require, new_require = old.get("require"), new.get("require")
    fewer = isinstance(old_require, list) and isinstance(new_require, list) and len(new_require) < len(old_require)
    return everyone or fewer


def is_unchanged_or_enabled(entry: dict[str, object]) -> bool:
    """The change left the control as it was: same value before and after, or still enabled afterwards."""
    old, new = entry.get("oldValueJson"), entry.get("newValueJson")
    if (
        isinstance(new, dict)
        and new.get("enabled") is True
        and (not isinstance(old, dict) or old.get("enabled") is True)
    ):
        return True
    old_text, new_text = read.text(entry, "oldValue"), read.text(entry, "newValue")
    return bool(new_text) and old_text == new_text


def insights(item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
    critical = [
        (index, issue)
        for index, issue in enumerate(read.records(item.output))
        if read.text(issue, "severity") == "critical" and read.text(issue, "dismissed") != "true"
    ]
    if not critical:
        return []
    index, issue = critical[0]
    subject = read.raw(issue, "subject") or read.raw(issue, "issue_type") or read.raw(issue, "issueType")
    finding = f"{len(critical)} open critical Cloudflare security insight(s), e.g. {subject}"
    return [Signal.from_step(item, "C4", 1.0, finding, f"insights[{index}]", subject)]


def _creates_credential(entry: dict[str, object]) -> bool:
    what = f"{_action(entry)} {_resource(entry)}"
    return bool(CREDENTIAL_ACTIONS.search(what)) and bool(re.search(r"create|add|roll|generate", what))


def _adds_admin(entry: dict[str, object]) -> bool:
    what = f"{_action(entry)} {_resource(entry)}"
    text = _entry_text(entry)
    return (
        "member" in what
        and not WEAKENING_ACTIONS.search(_action(entry))
        and bool(ELEVATED_ROLES.search(text))
        and not READ_ONLY.search(text)
    )


def _admin_to_outsider(entry: dict[str, object]) -> bool:
    """An administrator invited from another domain (a free-mail address, a look-alike): how a foothold is kept."""
    if not _adds_admin(entry):
        return False
    actor = read.raw(read.nested(entry, "actor"), "email").lower()
    invited = re.findall(r"[\w.+-]+@([\w-]+(?:\.[\w-]+)+)", _entry_text(entry).lower())
    if "@" not in actor:
        return False
    home = actor.rsplit("@", 1)[1]
    return any(domain != home for domain in invited)


CLAIMED_WEAKENING_POINTS = 2.0
CLAIMS_WEAKENING = re.compile(r"disabled|turned off|set to off|\boff\b|lowered|deleted|removed|paused|bypass")
AUDIT_ENTRIES = 20


def reported_changes(alert: AlertFacts, document: object) -> list[Signal]:
    """An audit entry the alert carries (action, actor, old/new value), read like the log's."""
    entries = _audit_entries(document)
    signals = [
        Signal(
            rule=change.rule,
            points=change.points,
            finding=f"The change the alert reports {change.meaning}: {describe(change.entry)}",
            locator="audit entry",
            quote=describe(change.entry),
        )
        for change in assess(entries)
    ]
    if not entries and CLAIMS_WEAKENING.search(alert.alert_type.lower()):
        # The vendor says a control was turned down and nothing here shows otherwise: the same fact as C2, at
        # the weight of a claim; an audit-log step that sees the change itself counts instead (once).
        finding = f"The alert reports a security control turned down ('{alert.alert_type}'), not yet verified"
        signals.append(
            Signal(
                rule="C2",
                points=CLAIMED_WEAKENING_POINTS,
                finding=finding,
                locator="alert_type",
                quote=alert.alert_type,
            )
        )
    if entries and all(_by_the_platform(entry) for entry in entries) and not any(s.points > 0 for s in signals):
        entry = entries[0]
        finding = f"Cloudflare itself made the change (automatic maintenance), not an account: {describe(entry)}"
        signals.append(_wrong_detection("C11", -3.0, finding, entry, "audit entry actor"))
    outsider = next((actor for actor in map(external_actor, entries) if actor), None)
    if outsider and signals:
        finding = f"The change was made by {outsider}, an account outside the zone's own domain"
        signals.append(Signal(rule="C10", points=1.0, finding=finding, locator="audit entry actor", quote=outsider))
    if (
        entries
        and not signals
        and CLAIMS_WEAKENING.search(alert.alert_type.lower())
        and is_unchanged_or_enabled(entries[0])
    ):
        entry = entries[0]
        finding = (
            f"The alert claims '{alert.alert_type}', but the change it reports weakened nothing: {describe(entry)}"
        )
        signals.append(_wrong_detection("C8", -4.0, finding, entry, "audit entry"))
    return signals


def _wrong_detection(rule: str, points: float, finding: str, entry: dict[str, object], locator: str) -> Signal:
    """A finding that the alert's own audit entry refutes the detection, quoting the entry."""
    return Signal(
        rule=rule,
        points=points,
        finding=finding,
        locator=locator,
        quote=describe(entry),
        explains=Explains.WRONG_DETECTION,
    )


def _by_the_platform(entry: dict[str, object]) -> bool:
    """Cloudflare's own automation (actor type ``Cloudflare``: certificate renewals, maintenance), no user or token."""
    actor = read.nested(entry, "actor")
    return read.text(actor, "type").lower() == "cloudflare" and not read.text(actor, "email")


def _audit_entries(document: object) -> list[dict[str, object]]:
    """Objects shaped like an audit log entry (an ``action`` and an ``actor`` object) anywhere in the alert."""
    found: list[dict[str, object]] = []
    stack: list[object] = [document]
    while stack and len(found) < AUDIT_ENTRIES:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("action"), dict) and isinstance(node.get("actor"), dict):
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _actor_audit_inputs(entities: Entities) -> dict[str, str] | None:
    """Changes by the person in the alert: by e-mail when known, else by source IP."""
    if entities.emails:
        return {"actor_email": first(EntityKind.EMAILS), "per_page": "50"}
    if entities.ips:
        return {"actor_ip": first(EntityKind.IPS), "per_page": "50"}
    return None


KNOWLEDGE = AnalystKnowledge(
    lookups=(
        LookupPlan(Lookup.ACTOR_CHANGES, "Cloudflare: changes by the actor", DETECTION_AUDIT_LOGS, _actor_audit_inputs),
        LookupPlan(Lookup.RECENT_CHANGES, "Cloudflare: recent account changes", AUDIT_LOGS, always({"per_page": "50"})),
        LookupPlan(Lookup.SECURITY_POSTURE, "Cloudflare: open security insights", INSIGHTS, always({"per_page": "25"})),
    ),
    readings={
        DETECTION_AUDIT_LOGS: audit_changes(attributed=True),
        AUDIT_LOGS: audit_changes(attributed=False),
        INSIGHTS: insights,
    },
    alert_readers=(reported_changes,),
    containment={
        Category.EDGE_WAF_CHANGE: (
            "Revert the Cloudflare setting or rule change",
            "Rotate the actor's Cloudflare API tokens and keys",
            "Review the account audit log for other changes by the actor",
            "Enforce two-factor authentication for Cloudflare dashboard members",
        ),
    },
    counted_once=frozenset({"C2", "C6", "C7"}),
)
