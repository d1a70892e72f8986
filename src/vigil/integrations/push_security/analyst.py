"""What Push Security's skills tell the analyst: the user's work accounts, open findings and detections (rules P)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from vigil.core.entities import Entities, EntityKind
from vigil.evidence import records as read
from vigil.evidence.knowledge import AnalystKnowledge, Lookup, LookupPlan, first, when
from vigil.evidence.signals import AlertFacts, Explains, Signal, StepOutput

FIND_ACCOUNT = "push_security.find_account_by_email"
LIST_ACCOUNTS = "push_security.list_accounts"
SECURITY_FINDINGS = "push_security.get_security_findings_by_email"


class FindingWeight(NamedTuple):
    points: float
    meaning: str


#: Push Security finding types -> what an open one weighs and means.
FINDING_WEIGHTS: dict[str, FindingWeight] = {
    "stolen_credentials": FindingWeight(3.0, "stolen credentials"),
    "leaked_password": FindingWeight(2.5, "a leaked password"),
    "reused_password": FindingWeight(1.0, "a reused password"),
    "mfa_not_registered": FindingWeight(1.0, "no MFA registered"),
    "weak_password": FindingWeight(0.5, "a weak password"),
    "shared_account": FindingWeight(0.5, "a shared account"),
}
DETECTION_POINTS = {"critical": 3.5, "high": 3.0, "medium": 1.5, "low": 0.5}
FINDINGS_CAP = 5.0
#: Alerts whose claim is the missing MFA itself: single sign-on that enforces MFA explains them away.
MFA_ALERT = re.compile(r"\bmfa\b|multi-?factor|two-?factor|2fa", re.IGNORECASE)


def _signal(item: StepOutput, rule: str, points: float, finding: str, locator: str, quote: str, who: str) -> Signal:
    return Signal.from_step(item, rule, points, finding, locator, quote, entities=(who,) if who else ())


def accounts(item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
    records = read.records(item.output)
    key = "accounts" if "accounts" in (item.output or {}) else "result"
    mfa = [read.text(account, "mfaRegistered") for account in records]
    if "false" in mfa:
        index = mfa.index("false")
        account = records[index]
        who = read.raw(account, "email")
        app = read.raw(account, "appType")
        sso = _sso_only(account)
        if sso and not MFA_ALERT.search(alert.alert_type):
            finding = f"{who}'s {app or 'work'} account is reached only through {sso}, which enforces MFA"
            return [Signal.from_step(item, "P4", 0.0, finding, f"{key}[{index}].loginMethods", sso)]
        if sso:
            finding = (
                f"{who}'s {app or 'work'} account has no MFA of its own but is reached only through {sso}, "
                "which enforces MFA"
            )
            locator = f"{key}[{index}].loginMethods"
            return [
                Signal.from_step(
                    item, "P4", -4.0, finding, locator, sso, explains=Explains.WRONG_DETECTION, entities=(who,)
                )
            ]
        finding = f"Push Security shows {who}'s {app or 'work'} account without MFA"
        return [_signal(item, "P1", 1.0, finding, f"{key}[{index}].mfaRegistered", "false", who)]
    if mfa and all(value == "true" for value in mfa):
        who = read.raw(records[0], "email")
        finding = f"Push Security shows MFA registered on {who}'s accounts"
        return [_signal(item, "P1", -0.5, finding, f"{key}[0].mfaRegistered", "true", who)]
    return []


def findings(item: StepOutput, alert: AlertFacts, entities: Entities) -> list[Signal]:
    """Open findings (stolen or leaked credentials weigh most) and detections such as a phishing tool."""
    output = item.output or {}
    who = read.raw(output, "email")
    signals: list[Signal] = []
    seen: set[str] = set()
    for index, finding in enumerate(_list(output, "findings")):
        if not isinstance(finding, dict) or read.text(finding, "state") == "resolved":
            continue
        kind = read.text(finding, "type")
        weight = FINDING_WEIGHTS.get(kind)
        if weight is None or kind in seen:
            continue
        seen.add(kind)
        app = read.raw(finding, "appType")
        text = f"Push Security has an open finding: {weight.meaning}" + (f" on {app}" if app else "") + f" for {who}"
        signals.append(
            _signal(item, "P2", weight.points, text, f"findings[{index}].type", read.raw(finding, "type"), who)
        )
    for index, detection in enumerate(_list(output, "detections")):
        if not isinstance(detection, dict) or read.text(detection, "archived") == "true":
            continue
        severity = read.text(detection, "severity")
        points = DETECTION_POINTS.get(severity, 1.0)
        kind = read.raw(detection, "detectionType") or read.raw(detection, "detection_type")
        text = f"Push Security detected {kind} ({severity or 'unrated'}) for {who}"
        signals.append(_signal(item, "P3", points, text, f"detections[{index}].detection_type", kind, who))
        break
    total = sum(signal.points for signal in signals)
    if total > FINDINGS_CAP:
        signals = [
            Signal(**{**signal.__dict__, "points": round(signal.points * FINDINGS_CAP / total, 2)})
            for signal in signals
        ]
    return signals


def _list(output: Mapping[str, object], key: str) -> list[object]:
    value = output.get(key)
    return value if isinstance(value, list) else []


def _sso_only(account: dict[str, object]) -> str:
    """The single sign-on provider when the account has no password login (MFA is then the IdP's job)."""
    methods = read.field(account, "loginMethods")
    if not isinstance(methods, dict) or read.text(methods, "passwordLogin") != "false":
        return ""
    for name in ("samlLogin", "oidcLogin", "vendorSsoLogin"):
        provider = read.raw(methods, name)
        if provider and provider.lower() not in {"false", "none", "null"}:
            return f"{provider} single sign-on"
    return "Okta single sign-on" if read.text(methods, "oktaSwaLogin") == "true" else ""


#: Extension permissions that read or rewrite what the user does on the web (Chrome's names).
SENSITIVE_PERMISSIONS = frozenset(
    {"cookies", "webrequest", "webrequestblocking", "scripting", "debugger", "nativemessaging", "proxy",
     "clipboardread", "declarativenetrequestwithhostaccess", "management", "history", "tabcapture"}
)  # fmt: skip
ALL_SITES = frozenset({"<all_urls>", "*://*/*", "http://*/*", "https://*/*"})
EXTENSION_POINTS = 1.5
OWNER_CHANGE_POINTS = 2.0


def browser_extension(alert: AlertFacts, document: object) -> list[Signal]:
    """A Push browser-extension event: what the extension may do on every site, and whether its developer
    changed — an extension bought or taken over and then pushed an update is how session cookies are stolen."""
    if not isinstance(document, dict) or read.text(document, "object").upper() != "BROWSER_EXTENSION":
        return []
    new = read.nested(document, "new")
    permissions = {str(item).lower() for item in _list(new, "permissions")}
    hosts = {str(item) for item in _list(new, "hostPermissions")}
    sensitive = sorted(permissions & SENSITIVE_PERMISSIONS)
    name = read.text(new, "name") or read.text(new, "extensionId")
    signals: list[Signal] = []
    if sensitive and hosts & ALL_SITES:
        finding = f"The extension {name} may use {', '.join(sensitive)} on every site: it can read sessions and pages"
        signals.append(Signal("P5", EXTENSION_POINTS, finding, locator="new.permissions", quote=", ".join(sensitive)))
    developer = read.nested(new, "developer")
    previous = read.text(developer, "previousName")
    if signals and previous and previous != read.text(developer, "name"):
        finding = (
            f"The extension's developer changed ({previous} -> {read.text(developer, 'name')}): an extension "
            "taken over or sold, then updated with broad permissions"
        )
        signals.append(Signal("P6", OWNER_CHANGE_POINTS, finding, locator="new.developer", quote=previous))
    return signals


_BY_EMAIL = when(EntityKind.EMAILS, {"email": first(EntityKind.EMAILS)})
KNOWLEDGE = AnalystKnowledge(
    lookups=(
        LookupPlan(Lookup.USER_FINDINGS, "Push Security: findings for the user", SECURITY_FINDINGS, _BY_EMAIL),
        LookupPlan(Lookup.USER_ACCOUNT, "Push Security: account of the user", FIND_ACCOUNT, _BY_EMAIL),
        LookupPlan(Lookup.USER_ACCOUNT, "Push Security: account of the user", LIST_ACCOUNTS, _BY_EMAIL),
    ),
    readings={FIND_ACCOUNT: accounts, LIST_ACCOUNTS: accounts, SECURITY_FINDINGS: findings},
    alert_readers=(browser_extension,),
    undeniable=frozenset({"P3"}),
)
