"""Keyword rules that put an alert into a category (documented in docs/analyst.md, "Categories").

Only what the *vendor* sets decides (SPEC §4, "Who chooses the plan"): the alert type, the provider, and
vendor fields of the body — category, finding or event type, threat family, MITRE technique — never free
text an attacker can write (command lines, subjects, comments). A keyword in the alert type weighs 3, in a
vendor field 2 (capped at 3 hits), a matching provider 1, a matching entity shape 1, a MITRE technique of
the category 2. The best score wins if it reaches 2; ties go to the earlier category in `RULES`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from vigil.ai.builtin.document import fields_of, values
from vigil.core.entities import Entities
from vigil.evidence.knowledge import Category
from vigil.evidence.signals import AlertFacts
from vigil.integrations.catalog import all_integrations

TYPE_WEIGHT = 3
VENDOR_FIELD_WEIGHT = 2
VENDOR_HITS_CAP = 3
PROVIDER_WEIGHT = 2
ENTITY_WEIGHT = 1
MITRE_WEIGHT = 2
MIN_SCORE = 2
#: Body fields the vendor fills in; their words may choose the category.
VENDOR_FIELDS = (
    "category",
    "categories",
    "title",
    "threatFamilyName",
    "detectionType",
    "detectionSource",
    "eventType",
    "eventName",
    "riskEventType",
    "riskEventTypes",
    "operationName",
    "activityDisplayName",
    "findingType",
    "alertType",
    "ruleName",
)


@dataclass(frozen=True)
class CategoryRule:
    category: Category
    keywords: tuple[str, ...]
    providers: tuple[str, ...] = ()
    mitre: tuple[str, ...] = ()


RULES: tuple[CategoryRule, ...] = (
    CategoryRule(
        Category.PHISHING,
        (
            "phish",
            "spoof",
            "suspicious email",
            "malicious email",
            "reported message",
            "user reported",
            "reported by user",
            "email reported",
            "credential harvest",
            "business email compromise",
            "impersonat",
            "malicious url clicked",
            "url click",
            "email messages containing",
            "aitm",
            "adversary in the middle",
        ),
        mitre=("T1566", "T1598"),
    ),
    CategoryRule(
        Category.ENDPOINT_MALWARE,
        (
            "malware",
            "ransomware",
            "trojan",
            "virus",
            "backdoor",
            "exploit",
            "malicious file",
            "suspicious process",
            "suspicious powershell",
            "hacktool",
            "mimikatz",
            "coinminer",
            "credential dumping",
            "credential access",
            "credentialaccess",
            "lsass",
            "quarantin",
            "persistence",
            "execution",
            "living off the land",
            "lateral movement",
            "defense evasion",
            "command and control",
            "scheduled task",
            "run key",
        ),
        ("crowdstrike", "sentinelone"),
        ("T1003", "T1486", "T1490", "T1059", "T1218", "T1547", "T1053", "T1055", "T1105"),
    ),
    CategoryRule(
        Category.CLOUD_CREDENTIALS,
        (
            "instance credential",
            "credential exfiltration",
            "iam user",
            "iamuser",
            "access key",
            "createaccesskey",
            "root credential",
            "assume role",
            "assumerole",
            "instance metadata",
            "imds",
            "security credentials",
            "unauthorized access iam",
            "kubernetes",
            "service account key",
        ),
        ("aws", "gcp", "azure"),
        ("T1552", "T1528", "T1078.004"),
    ),
    CategoryRule(
        Category.DATA_EXFILTRATION,
        (
            "exfiltration",
            "exfil",
            "data theft",
            "mass download",
            "large upload",
            "unusual volume",
            "data transfer",
            "mass file",
            "sensitive data",
            "dlp",
            "data loss",
            "external sharing",
            "cloud storage upload",
            "bulk download",
            "staged",
        ),
        mitre=("T1567", "T1048", "T1041", "T1537", "T1020", "T1074", "T1560"),
    ),
    CategoryRule(
        Category.EDGE_WAF_CHANGE,
        (
            "waf",
            "firewall rule",
            "ruleset",
            "zone setting",
            "security level",
            "change setting",
            "ddos",
            "rate limit",
            "bot management",
            "dns record",
            "page rule",
            "ssl",
            "tls",
            "encryption mode",
            "https",
            "dnssec",
            "account member",
            "member added",
            "api token",
        ),
    ),
    CategoryRule(
        Category.ACCOUNT_CHANGE,
        (
            "account created",
            "user created",
            "user added",
            "role assigned",
            "role added",
            "admin added",
            "privilege",
            "group membership",
            "added to group",
            "password reset",
            "factor reset",
            "mfa method",
            "mfa factor",
            "factor deactivate",
            "user account",
            "api key created",
            "permission change",
            "oauth",
            "consent granted",
            "app consent",
            "app password",
            "token created",
            "mfa not registered",
            "reused password",
            "leaked password",
            "weak password",
            "shadow it",
            "unmanaged",
            "shared account",
        ),
        (),
        ("T1098", "T1136"),
    ),
    CategoryRule(
        Category.IDENTITY_SIGNIN,
        (
            "sign in",
            "signin",
            "login",
            "logon",
            "authentication",
            "impossible travel",
            "atypical travel",
            "unfamiliar",
            "password spray",
            "brute force",
            "bruteforce",
            "anonymous ip",
            "risky sign",
            "session start",
            "mfa fatigue",
            "mfa push",
            "push notification",
            "token replay",
            "legacy auth",
        ),
        ("okta", "entra", "entra_id", "azure_ad", "google_workspace"),
        ("T1110", "T1621", "T1078"),
    ),
)

_SEPARATORS = re.compile(r"[^a-z0-9]+")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _normalize(text: str) -> str:
    """Lower-case words separated by single spaces; camelCase split so ``SignInFailure`` reads ``sign in``."""
    return " " + _SEPARATORS.sub(" ", _CAMEL_BOUNDARY.sub(" ", text).lower()).strip() + " "


def _hits(text: str, keywords: tuple[str, ...]) -> int:
    """Keywords present in text, matched from a word start (``phish`` matches ``phishing``)."""
    return sum(1 for keyword in keywords if f" {keyword}" in text)


def category_scores(alert: AlertFacts, entities: Entities) -> dict[Category, int]:
    """Score of every rule; exposed so the documentation's examples and the tests can show the arithmetic."""
    alert_type = _normalize(alert.alert_type)
    fields = fields_of(alert.alert_content)
    vendor = _normalize(" ".join(field.value for field in values(fields, *VENDOR_FIELDS)))
    if alert.alert_provider.lower() == "aws":
        vendor += _normalize(" ".join(field.value for field in values(fields, "type")))
    techniques = {field.value.upper() for field in values(fields, "mitreTechniques", "techniques", "technique")}
    provider = alert.alert_provider.lower()
    scores: dict[Category, int] = {}
    for rule in RULES:
        score = TYPE_WEIGHT * _hits(alert_type, rule.keywords)
        score += VENDOR_FIELD_WEIGHT * min(VENDOR_HITS_CAP, _hits(vendor, rule.keywords))
        if provider in rule.providers or _integration_category(provider) is rule.category:
            score += PROVIDER_WEIGHT
        if _entity_hint(rule.category, entities):
            score += ENTITY_WEIGHT
        if any(technique.startswith(rule.mitre) for technique in techniques) if rule.mitre else False:
            score += MITRE_WEIGHT
        scores[rule.category] = score
    return scores


@functools.cache
def _integration_categories() -> dict[str, Category]:
    """The category each integration that is also an alert provider declares for its alerts (its folder says so)."""
    return {i.id: Category(i.alert_category) for i in all_integrations() if i.alert_category is not None}


def _integration_category(provider: str) -> Category | None:
    return _integration_categories().get(provider)


def _entity_hint(category: Category, entities: Entities) -> bool:
    if category is Category.ENDPOINT_MALWARE:
        return bool(entities.device_ids or entities.sha256s or entities.sha1s or entities.md5s)
    if category is Category.PHISHING:
        return bool(entities.urls and entities.emails)
    return False


def classify(alert: AlertFacts, entities: Entities) -> Category:
    """The category of an alert, or GENERIC when no rule scores at least `MIN_SCORE`."""
    scores = category_scores(alert, entities)
    best = max(RULES, key=lambda rule: scores[rule.category])  # max keeps the first of equal scores
    return best.category if scores[best.category] >= MIN_SCORE else Category.GENERIC
