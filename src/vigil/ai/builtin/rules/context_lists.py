"""The alert's subjects read against public lists (L, S3, G rules): who an address or a domain belongs to, and
what an OAuth grant allows (docs/analyst.md).

Being on a list says what a thing *is*, never that it is malicious: a cloud provider's range is hosting, a
SaaS vendor's range is the vendor talking, a research scanner probing an edge is the internet's background
noise. Only two kinds weigh towards malice, and only where they mean something: a VPN/datacentre exit behind
a sign-in, a free dynamic-DNS zone behind a link. Every hit cites its list.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from vigil.ai.builtin.classify import classify
from vigil.ai.builtin.document import Field, fields_of
from vigil.core.entities import Entities, EntityKind
from vigil.evidence.knowledge import Category
from vigil.evidence.signals import AlertFacts, Explains, Signal
from vigil.knowledge import identity, network
from vigil.knowledge.network import ListHit, ListKind

#: Subject addresses and domains read per alert (the subjects come first; the rest is context of context).
MAX_SUBJECTS = 5
#: Categories where the subject address is someone signing in or using a credential.
SIGN_IN_CATEGORIES = frozenset({Category.IDENTITY_SIGNIN, Category.CLOUD_CREDENTIALS})
#: Categories where the subject address is the remote end probing an edge or a service.
#: The vendor's own word that the alert is about probing (GuardDuty ``Recon:EC2/PortProbeUnprotectedPort``).
RECONNAISSANCE = re.compile(r"^recon\b|reconnaissance|port ?(?:probe|scan)", re.IGNORECASE)
CLAIM_KEYS = frozenset({"type", "category", "threatpurpose", "tactic", "alerttype"})
#: An alert about a grant (OAuth consent, an app role, domain-wide delegation), by its own words.
GRANT = re.compile(r"consent|grant|oauth|authori[sz]e|delegat|app ?role|permission", re.IGNORECASE)
EVENT_NAME_KEYS = frozenset({"activitydisplayname", "operationname", "eventname", "eventtype", "action", "name"})
#: The most specific kind describes an address: a scanner on a cloud range is a scanner; the VPN/datacentre
#: list also holds every cloud range, so it speaks only for addresses no provider publishes.
ADDRESS_ORDER = (ListKind.SCANNER, ListKind.SERVICE, ListKind.RESOLVER, ListKind.CLOUD, ListKind.ANONYMISER)
SERVICE_POINTS = -1.0
SHARED_SERVICE_POINTS = -0.5
SCANNER_POINTS = -1.5
RESOLVER_POINTS = -0.5
ANONYMISER_SIGN_IN_POINTS = 1.5
DYNAMIC_DNS_POINTS = 1.0
SHORTENER_POINTS = 0.5
SIMULATION_POINTS = -5.0
FIRST_PARTY_POINTS = -1.5
TIER_POINTS = {identity.Tier.HIGH: 2.0, identity.Tier.MEDIUM: 1.0, identity.Tier.LOW: -0.5}
#: Fields naming the application of a grant (Entra ``appId``, Okta/Google ``client_id``, Push ``appId``...).
APP_ID_KEYS = frozenset({"appid", "clientid", "applicationid", "oauthclientid", "serviceprincipalnames"})
#: Fields listing what was granted (``scope``, ``oauthScopes``, Entra's ``ConsentAction.Permissions`` new value).
SCOPE_KEY = re.compile(r"scope|permission|^newvalue$")
GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
SCOPE_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
MAX_SCOPES = 50
#: Where a grant names the application's verified publisher (Entra's and Google's publisher verification).
PUBLISHER_KEYS = frozenset({"verifiedpublisher", "verifiedpublisherdisplayname", "publisherverified"})
#: A verified publisher's grant counts for this share of its tier: still broad access, but no consent phishing.
VERIFIED_WEIGHT = 0.5
NOT_A_NAME = frozenset({"", "false", "true", "none", "null", "0", "{}", "[]"})


def list_rules(alert: AlertFacts, entities: Entities) -> list[Signal]:
    """Every list hit on the alert's subjects, and the consent rules when the alert reports a grant."""
    category = classify(alert, entities)
    fields = fields_of(alert.alert_content)
    probing = bool(RECONNAISSANCE.search(alert.alert_type)) or any(
        field.key in CLAIM_KEYS and RECONNAISSANCE.search(field.value) for field in fields
    )
    signals = [
        signal
        for address in entities.subject(EntityKind.IPS)[:MAX_SUBJECTS]
        if (signal := _address(address, category, fields, probing)) is not None
    ]
    links = _links(entities)
    signals.extend(_domains(links, fields))
    if category is Category.PHISHING:
        signals.extend(_simulation(links, entities.subject(EntityKind.IPS), fields))
    if GRANT.search(alert.alert_type) or any(
        field.key in CLAIM_KEYS | EVENT_NAME_KEYS and GRANT.search(field.value) for field in fields
    ):
        signals.extend(consent(fields))
    return signals


def _cited(hit: ListHit, value: str) -> str:
    return f"[MISP {hit.list_id}] {value} is in '{hit.name}'"


def field_of(fields: Sequence[Field], value: str) -> Field | None:
    """Where the alert says `value`: the field that is exactly it, else the first that contains it."""
    wanted = value.lower()
    exact = next((field for field in fields if field.value.strip().lower() == wanted), None)
    return exact or next((field for field in fields if wanted in field.value.lower()), None)


def _signal(
    rule: str, points: float, finding: str, value: str, fields: Sequence[Field], explains: Explains | None = None
) -> Signal:
    field = field_of(fields, value)
    locator = field.path if field is not None else "entities"
    return Signal(rule, points, finding, locator=locator, quote=value, explains=explains, entities=(value,))


def _address(address: str, category: Category, fields: Sequence[Field], probing: bool) -> Signal | None:
    hits = network.ip_lists(address)
    kinds = {hit.kind for hit in hits}
    kind = next((kind for kind in ADDRESS_ORDER if kind in kinds), None)
    if kind is None:
        return None
    hit = next(hit for hit in hits if hit.kind is kind)
    cited = _cited(hit, address)
    if kind is ListKind.SCANNER:
        if category in SIGN_IN_CATEGORIES and not probing:
            finding = f"{cited}: a known internet scanner, yet here it signs in, which scanning does not explain"
            return _signal("L4", 0.0, finding, address, fields)
        finding = f"{cited}: a known internet scanner, background noise against an edge rather than a targeted attack"
        return _signal("L4", SCANNER_POINTS, finding, address, fields, explains=Explains.AUTHORISED)
    if kind is ListKind.SERVICE:
        cloud = next((other for other in hits if other.kind is ListKind.CLOUD), None)
        shared = f"; the range is also {cloud.owner}'s, so shared cloud compute" if cloud else ""
        finding = f"{cited}, {hit.label}: the vendor's own service, CI or webhooks, neutral-to-benign context{shared}"
        return _signal("L1", SHARED_SERVICE_POINTS if cloud else SERVICE_POINTS, finding, address, fields)
    if kind is ListKind.RESOLVER:
        finding = f"{cited}: a public DNS resolver, not an indicator by itself"
        return _signal("L5", RESOLVER_POINTS, finding, address, fields)
    if kind is ListKind.CLOUD:
        finding = f"{cited}, {hit.label}: a cloud provider's address, hosting is not suspicious by itself"
        return _signal("L2", 0.0, finding, address, fields)
    if category in SIGN_IN_CATEGORIES:
        finding = f"{cited}: the sign-in came through a VPN or datacentre exit, not a person's own network"
        return _signal("S3", ANONYMISER_SIGN_IN_POINTS, finding, address, fields)
    finding = f"{cited}: a VPN or datacentre address (context, not a sign-in)"
    return _signal("L3", 0.0, finding, address, fields)


def _links(entities: Entities) -> list[str]:
    """The domains the alert is about: subject domains and the hosts of subject URLs, in order, once each."""
    hosts = [urlsplit(url).hostname or "" for url in entities.subject(EntityKind.URLS)]
    return list(dict.fromkeys(host.lower() for host in [*entities.subject(EntityKind.DOMAINS), *hosts] if host))


def _domains(links: Sequence[str], fields: Sequence[Field]) -> list[Signal]:
    """A link on a free dynamic-DNS zone or behind a shortener, once per kind."""
    weights = {
        ListKind.DYNAMIC_DNS: ("L6", DYNAMIC_DNS_POINTS, "a free dynamic-DNS zone, favoured for throwaway hosts"),
        ListKind.SHORTENER: ("L7", SHORTENER_POINTS, "a URL shortener, which hides where the link leads"),
    }
    signals: dict[ListKind, Signal] = {}
    for domain in links[:MAX_SUBJECTS]:
        for hit in network.domain_lists(domain):
            if hit.kind in weights and hit.kind not in signals:
                rule, points, meaning = weights[hit.kind]
                signals[hit.kind] = _signal(rule, points, f"{_cited(hit, domain)}: {meaning}", domain, fields)
    return list(signals.values())


def _simulation(links: Sequence[str], addresses: Iterable[str], fields: Sequence[Field]) -> list[Signal]:
    """A reported mail whose every link (or, without links, whose sender address) is phishing-simulation
    infrastructure is the organization's own test: one real link elsewhere keeps it a phish."""
    simulated = {link for link in links if _is_simulation(network.domain_lists(link))}
    senders = [address for address in addresses if _is_simulation(network.ip_lists(address))]
    if (links and simulated != set(links)) or not (simulated or senders):
        return []
    value = sorted(simulated)[0] if simulated else senders[0]
    hit = next(h for h in (*network.domain_lists(value), *network.ip_lists(value)) if h.kind is ListKind.SIMULATION)
    finding = f"{_cited(hit, value)}: the mail points only at phishing-simulation infrastructure, an authorised test"
    return [_signal("L8", SIMULATION_POINTS, finding, value, fields, explains=Explains.WRONG_DETECTION)]


def _is_simulation(hits: Iterable[ListHit]) -> bool:
    return any(hit.kind is ListKind.SIMULATION for hit in hits)


def consent(fields: Sequence[Field]) -> list[Signal]:
    """An OAuth grant: Microsoft's own application is the platform working (G1); any other app is weighed by
    the highest risk tier of what it was granted (G2)."""
    scopes = _granted_scopes(fields)
    if not scopes:
        return []
    app = _first_party(fields)
    if app is not None:
        name, field = app
        finding = f"[MS-APPS] the grant is to Microsoft first-party application '{name}', not a third-party app"
        return [Signal(rule="G1", points=FIRST_PARTY_POINTS, finding=finding, locator=field.path, quote=field.value)]
    top = max(scope.tier for scope, _ in scopes)
    named = [scope.value for scope, _ in scopes if scope.tier is top]
    tag = "GOOGLE" if all(identity.GOOGLE_SCOPE.fullmatch(scope.value) for scope, _ in scopes) else "GRAPH"
    finding = (
        f"[{tag}] a third-party application was granted {top.name.lower()}-risk permission(s) {', '.join(named)}"
        f" ({len(scopes)} scope(s) granted)"
    )
    field = next(field for scope, field in scopes if scope.tier is top)
    publisher = next(
        (f.value.strip() for f in fields if f.key in PUBLISHER_KEYS and f.value.strip().lower() not in NOT_A_NAME),
        None,
    )
    if publisher is not None:
        finding += f"; the application's publisher is verified ({publisher}): a known vendor's app, not a lure"
        return [Signal(rule="G3", points=TIER_POINTS[top] * VERIFIED_WEIGHT, finding=finding, locator=field.path,
                       quote=", ".join(named))]  # fmt: skip
    return [Signal(rule="G2", points=TIER_POINTS[top], finding=finding, locator=field.path, quote=", ".join(named))]


def _granted_scopes(fields: Sequence[Field]) -> list[tuple[identity.Scope, Field]]:
    found: dict[str, tuple[identity.Scope, Field]] = {}
    for field in fields:
        for url in identity.GOOGLE_SCOPE.findall(field.value[:4096]):
            google = identity.google_scope(url)
            if google is not None and google.value.lower() not in found and len(found) < MAX_SCOPES:
                found[google.value.lower()] = (google, field)
        if not SCOPE_KEY.search(field.key):
            continue
        for token in SCOPE_TOKEN.findall(field.value[:4096]):
            known = identity.scope(token) or _unlisted_scope(token)
            if known is not None and known.value.lower() not in found and len(found) < MAX_SCOPES:
                found[known.value.lower()] = (known, field)
    return list(found.values())


def _unlisted_scope(token: str) -> identity.Scope | None:
    """Exchange's full-access permissions are not Graph's, yet grants name them."""
    if identity.FULL_ACCESS.match(token.lower()):
        return identity.Scope(token, identity.scope_tier(token), admin_consent=True, description="")
    return None


def _first_party(fields: Sequence[Field]) -> tuple[str, Field] | None:
    for field in fields:
        if field.key in APP_ID_KEYS:
            for app_id in GUID.findall(field.value):
                name = identity.first_party_app(app_id)
                if name is not None:
                    return name, field
    return None
