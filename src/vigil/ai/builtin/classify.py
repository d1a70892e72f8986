"""Keyword rules that put an alert into a category (documented in docs/analyst.md, "Categories").

Scoring, not first-match: a keyword in the alert type weighs 3, in the content 1 (content hits capped at 3
per category, so a long log cannot outvote the type), a matching provider 1, a matching entity shape 1.
The best score wins if it reaches 2; ties go to the earlier category in `RULES` (the more specific one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vigil.ai.schemas import AlertFacts, Category
from vigil.investigations.entities import Entities

TYPE_WEIGHT = 3
CONTENT_WEIGHT = 1
CONTENT_HITS_CAP = 3
PROVIDER_WEIGHT = 1
ENTITY_WEIGHT = 1
MIN_SCORE = 2


@dataclass(frozen=True)
class CategoryRule:
    category: Category
    keywords: tuple[str, ...]
    providers: tuple[str, ...] = ()


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
            "credential harvest",
            "business email compromise",
            "impersonat",
            "malicious url clicked",
            "email messages containing",
        ),
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
            "hacktool",
            "mimikatz",
            "coinminer",
            "cryptocurrency",
            "credential dumping",
            "lsass",
            "quarantin",
            "persistence",
            "execution",
        ),
        ("microsoft_defender", "defender", "crowdstrike", "sentinelone"),
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
            "ssl setting",
        ),
        ("cloudflare",),
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
            "access key created",
            "createaccesskey",
            "api key created",
            "permission change",
            "oauth",
            "consent granted",
            "app consent",
            "app password",
            "token created",
        ),
        ("push_security",),
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
            "token replay",
        ),
        ("okta", "entra", "azure_ad", "aws"),
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
    content = _normalize(alert.alert_content)
    provider = alert.alert_provider.lower()
    scores: dict[Category, int] = {}
    for rule in RULES:
        score = TYPE_WEIGHT * _hits(alert_type, rule.keywords)
        score += CONTENT_WEIGHT * min(CONTENT_HITS_CAP, _hits(content, rule.keywords))
        if provider in rule.providers:
            score += PROVIDER_WEIGHT
        if _entity_hint(rule.category, entities):
            score += ENTITY_WEIGHT
        scores[rule.category] = score
    return scores


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
