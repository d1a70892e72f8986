"""Microsoft first-party applications and Graph permissions (the `identity` bundle), for consent alerts.

A grant to one of Microsoft's own applications is the platform working; a grant to a third-party multi-tenant
app is weighed by what its scopes allow. The risk tier of a scope is derived from its name by one documented
rule (`scope_tier`), so a scope the table lacks (Exchange's ``full_access_as_app``) still gets a tier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

from vigil.knowledge.bundle import bundle_cache, read_json

BUNDLE = "identity"
DATA_FILE = "identity.json.gz"
LICENCE_FILE = "LICENSE"


class Tier(IntEnum):
    LOW = 1
    MEDIUM = 2
    HIGH = 3


#: Resources holding the organization's data: mail, files, conversations.
DATA_RESOURCES = frozenset(
    {
        "mail", "mailboxsettings", "mailboxitem", "mailboxfolder", "ews", "imap", "pop", "smtp", "exchangemanage",
        "files", "sites", "notes", "chat", "channelmessage",
    }
)  # fmt: skip
#: Resources that control identities and access: what matters is a grant over the whole tenant (``.All``).
DIRECTORY_RESOURCES = frozenset(
    {
        "directory", "rolemanagement", "roleassignmentschedule", "roleeligibilityschedule", "application",
        "approleassignment", "delegatedpermissiongrant", "policy", "domain", "user", "group", "groupmember",
        "privilegedaccess", "identityprovider", "organization", "device", "serviceprincipalendpoint",
    }
)  # fmt: skip
#: Operation words that change, send or act as someone (anything else reads).
WRITE_OPERATION = re.compile(r"write|send|manage|fullcontrol|accessasuser|create|delete|impersonat|full_access")
#: Scopes granting a mailbox or every mailbox outright (Exchange's, not in Graph's table).
FULL_ACCESS = re.compile(r"^full_access_as_(?:app|user)$|^user_impersonation$")


@dataclass(frozen=True)
class Scope:
    value: str
    tier: Tier
    admin_consent: bool
    description: str


def scope_tier(value: str, *, admin_consent: bool = False) -> Tier:
    """High: changes, sends or acts on mail, files or chats, or changes the directory tenant-wide (``Mail.ReadWrite``,
    ``Mail.Send``, ``Files.ReadWrite.All``, ``Directory.ReadWrite.All``, ``full_access_as_app``). Medium: reads
    them or the whole directory (``Mail.Read``, ``Directory.Read.All``), changes anything else
    (``Calendars.ReadWrite``, ``User.ReadWrite``), or only an administrator may grant it. Low: the rest
    (``User.Read``, ``openid``, ``offline_access``, ``*.ReadBasic*``)."""
    name = value.strip().lower()
    if FULL_ACCESS.match(name):
        return Tier.HIGH
    resource, _, operation = name.partition(".")
    if "readbasic" in operation or not operation:
        return Tier.MEDIUM if admin_consent else Tier.LOW
    writes = bool(WRITE_OPERATION.search(operation))
    if resource in DATA_RESOURCES:
        return Tier.HIGH if writes else Tier.MEDIUM
    if resource in DIRECTORY_RESOURCES and operation.endswith(".all"):
        return Tier.HIGH if writes else Tier.MEDIUM
    return Tier.MEDIUM if writes or admin_consent else Tier.LOW


@bundle_cache
def _tables() -> tuple[dict[str, str], dict[str, Scope]]:
    raw = read_json(BUNDLE, DATA_FILE)
    scopes: dict[str, Scope] = {}
    for value, (description, admin) in raw["application"].items():
        scopes[value.lower()] = Scope(value, scope_tier(value, admin_consent=admin), admin, description)
    for value, (description, admin) in raw["delegated"].items():  # delegated wins: what a consent grants
        scopes[value.lower()] = Scope(value, scope_tier(value, admin_consent=admin), admin, description)
    return raw["apps"], scopes


def first_party_app(app_id: str) -> str | None:
    """The name of Microsoft's own application with this id, or None for any other app."""
    return _tables()[0].get(app_id.strip().lower())


def scope(value: str) -> Scope | None:
    """A Graph permission by name (case-insensitive), with its tier; None for a word that is not one."""
    return _tables()[1].get(value.strip().lower())


#: Google OAuth scopes are URLs; Gmail's and Drive's are Google's "restricted" scopes (full mailbox or file access).
GOOGLE_SCOPE = re.compile(r"https://mail\.google\.com/|https://www\.googleapis\.com/auth/[\w.-]+")
GOOGLE_SENSITIVE = (
    "gmail", "drive", "https://mail.google.com", "admin.directory", "admin.datatransfer", "cloud-platform"
)  # fmt: skip
GOOGLE_READ_ONLY = re.compile(r"\.(?:readonly|metadata(?:\.readonly)?|labels|file|appdata)$")


def google_scope(value: str) -> Scope | None:
    """A Google OAuth scope URL with its tier by the same rule as Graph's: Gmail or Drive in full (or changing
    them) is high, reading them or the directory is medium, changing the directory (``admin.directory.user``) is
    high, the rest low. None for anything that is not a Google scope URL."""
    url = value.strip()
    if not GOOGLE_SCOPE.fullmatch(url):
        return None
    name = url.removeprefix("https://www.googleapis.com/auth/").lower()
    read_only = bool(GOOGLE_READ_ONLY.search(name))
    sensitive = name.startswith(GOOGLE_SENSITIVE)
    tier = (Tier.MEDIUM if read_only else Tier.HIGH) if sensitive else Tier.LOW
    return Scope(url, tier, admin_consent=False, description="Google OAuth scope")


def warm() -> int:
    apps, scopes = _tables()
    return len(apps) + len(scopes)
