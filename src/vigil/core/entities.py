"""Pull investigable entities (IPs, domains, URLs, hashes, emails, users, hosts, device ids) out of an alert.

Alert content is JSON text more often than not, and there the *key* says what a value is: a 40-hex string
under ``machineId`` is a device, under ``sha1`` a hash. Everything else falls back to regexes over the text.
The regexes are written without nested ambiguous quantifiers so a hostile 256 KiB alert costs linear time,
and nothing in here raises: a broken alert must still be investigated.

The key path also says what *role* a value plays (`Role`): the account that performed the activity, the
affected machine and the remote address are the alert's subjects and come first in every list, ahead of
affected accounts and other structured fields, of comment authors, assignees and management infrastructure,
and of values that only appear in prose. Playbook templates read ``entities.ips[0]``, so this order decides
what each step looks up. Conventions are in docs/entities.md.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator
from enum import IntEnum, StrEnum
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator

#: Content beyond this many characters is ignored; intake caps alerts at 256 KiB, this is a safety margin.
MAX_CONTENT_CHARS = 1_048_576
#: At most this many values are kept per entity kind, so a log dump cannot produce a megabyte of entities.
MAX_PER_KIND = 500


class EntityKind(StrEnum):
    """The entity lists of `Entities`; values are the field names templates use (``entities.ips``)."""

    IPS = "ips"
    DOMAINS = "domains"
    URLS = "urls"
    MD5S = "md5s"
    SHA1S = "sha1s"
    SHA256S = "sha256s"
    EMAILS = "emails"
    USERS = "users"
    HOSTS = "hosts"
    DEVICE_IDS = "device_ids"


class Role(IntEnum):
    """How central a value is to its alert; lists are ordered by role first (lower first)."""

    #: What the alert is about: the account that performed the activity, the affected machine and its id,
    #: the remote/source address, and indicators (file hash, URL, domain) in their own structured field.
    SUBJECT = 0
    #: A structured field without a subject role: the account an admin action was done *to*, a destination,
    #: the machine's other addresses, an e-mail sender, a free-text ``key=value`` pair.
    RELATED = 1
    #: People around the alert (comment authors, assignees, reviewers, approvers, managers, owners) and the
    #: infrastructure that reported or carried it (reporting host, management server, collector, sensor host,
    #: DNS server, gateway, proxy).
    PERIPHERAL = 2
    #: Found only inside prose: descriptions, titles, command lines, or an alert that is not JSON at all.
    TEXT = 3


class Entities(BaseModel):
    """Entities of one alert, every list de-duplicated and ordered by (role, value order).

    Value order is numeric for IPs with public addresses first, alphabetical for everything else.
    ``subjects`` holds the `Role.SUBJECT` values of each kind (keyed by `EntityKind` value, same order, kinds
    without subjects left out); it defaults to empty so entities recorded before it existed still validate.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    ips: list[str] = []
    domains: list[str] = []
    urls: list[str] = []
    md5s: list[str] = []
    sha1s: list[str] = []
    sha256s: list[str] = []
    emails: list[str] = []
    users: list[str] = []
    hosts: list[str] = []
    device_ids: list[str] = []
    subjects: dict[str, list[str]] = {}

    @field_validator("subjects")
    @classmethod
    def _subjects_are_known_kinds(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        unknown = sorted(set(value) - {kind.value for kind in EntityKind})
        if unknown:
            raise ValueError(f"unknown entity kinds in subjects: {', '.join(unknown)}")
        return value

    def of(self, kind: EntityKind) -> list[str]:
        """The list for one kind, for code that iterates over kinds instead of naming fields."""
        values: list[str] = getattr(self, kind.value)
        return values

    def subject(self, kind: EntityKind | str) -> list[str]:
        """The subject-role values of one kind (the alert's own user, machine, remote address…), best first."""
        return self.subjects.get(EntityKind(kind).value, [])

    def is_empty(self) -> bool:
        return not any(self.of(kind) for kind in EntityKind)


# --- key vocabulary (keys are compared lower-cased with '_', '-', '.' and spaces removed) -----------------

_USER_KEYS = frozenset(
    {
        "userprincipalname",
        "upn",
        "accountname",
        "samaccountname",
        "accountupn",
        "username",
        "user",
        "loginname",
        "login",
        "alternateid",  # Okta actor/target login
        "targetusername",
        "subjectusername",
        "initiatingprocessaccountname",
        "initiatingprocessaccountupn",
        "userid",  # Microsoft 365 unified audit log: the acting user's UPN
        "agentlastloggedinusername",  # SentinelOne agentDetectionInfo
        "processuser",  # SentinelOne threatInfo: DOMAIN\\user the process ran as
        "actor",  # a code host's audit log: the acting login (a string; identity and edge logs make actor an object)
    }
)
#: Keys that name a machine only when the value is a DNS name: Purview's ``device`` is a host, Okta's
#: ``client.device`` is a device type ("Computer").
_FQDN_ONLY_HOST_KEYS = frozenset({"device"})
#: Keys that hold a user name only when the value is a UPN (Entra's ``userId`` is an object id GUID).
_UPN_ONLY_KEYS = frozenset({"userid"})
#: A ``name`` key counts as a user name only inside one of these objects (``relatedUser.name``).
_USER_PARENT_KEYS = frozenset({"user", "relateduser", "account", "useridentity"})
_HOST_KEYS = frozenset(
    {
        "hostname",
        "host",
        "computerdnsname",
        "devicename",
        "computername",
        "agentcomputername",  # SentinelOne agentRealtimeInfo
        "computer",
        "machinename",
        "dnsname",
        "privatednsname",
        "publicdnsname",
        "fqdn",
        "workstation",
        "workstationname",
        "sourcehostname",
        "destinationhostname",
    }
)
_DEVICE_ID_KEYS = frozenset(
    {"machineid", "deviceid", "aid", "sensorid", "agentid", "aaddeviceid", "mdatpdeviceid", "instanceid"}
)
_HASH_KEYS: dict[str, EntityKind] = {
    "md5": EntityKind.MD5S,
    "filehashmd5": EntityKind.MD5S,
    "sha1": EntityKind.SHA1S,
    "filehashsha1": EntityKind.SHA1S,
    "sha256": EntityKind.SHA256S,
    "filehashsha256": EntityKind.SHA256S,
}
#: Values under these keys are software versions or user agents: dotted quads there are not addresses.
_NO_IP_KEY_PARTS = ("version", "useragent", "build")
_PLACEHOLDER_VALUES = frozenset({"", "-", "null", "none", "n/a", "na", "unknown", "undefined", "system"})

# --- role vocabulary (same key normalisation) -----------------------------------------------------------
#
# A value's role is decided by its own key and its ancestors' keys, never by its words: an attacker writes
# descriptions and command lines, the vendor writes the field names.

#: Everything under these keys is about the account an action was done *to* (Okta ``target[]``, Entra
#: ``targetResources[]``, CloudTrail ``requestParameters``); the account that performed it (``actor``,
#: ``initiatedBy``, ``userIdentity``) is the subject.
_TARGET_KEYS = frozenset(
    {"target", "targets", "targetresource", "targetresources", "requestparameters", "responseelements"}
)
#: Everything under a key containing one of these is peripheral: the people around the alert
#: (``comments[].createdBy``, ``assignedTo``, ``appOwner``, ``manager``), not the ones it is about.
_PEOPLE_KEY_PARTS = (
    "comment",
    "assignedto",
    "assignee",
    "createdby",
    "modifiedby",
    "updatedby",
    "closedby",
    "resolvedby",
    "reviewer",
    "reviewedby",
    "approver",
    "approvedby",
    "manager",
    "owner",
)
#: Everything under a key starting with one of these is peripheral: the infrastructure that reported or
#: carried the alert rather than the machine it is about (prefix only: ``apiGateway`` is a resource).
_INFRA_KEY_PREFIXES = (
    "reporting",
    "management",
    "collector",
    "sensorhost",
    "sensorname",
    "sensorip",
    "dnsserver",
    "nameserver",
    "gateway",
    "defaultgateway",
    "proxy",
    "relay",
    "forwarder",
)
#: ``sensor`` alone is infrastructure; ``sensorId`` (CrowdStrike) is the affected machine's id.
_PERIPHERAL_EXACT_KEYS = frozenset({"sensor", "sensors"})
#: Infrastructure keys whose value is a machine: typed as a host (or an IP), always peripheral.
_INFRA_HOST_KEYS = frozenset(
    {
        "reportinghost",
        "reportinghostname",
        "reportingdevice",
        "reportingserver",
        "managementserver",
        "managementhost",
        "managementip",
        "collector",
        "collectorhost",
        "collectorname",
        "collectorip",
        "sensor",
        "sensorhost",
        "sensorhostname",
        "sensorname",
        "sensorip",
        "dnsserver",
        "dnsservers",
        "nameserver",
        "nameservers",
        "gateway",
        "gatewayip",
        "defaultgateway",
        "proxy",
        "proxyhost",
        "proxyip",
        "proxyserver",
        "relay",
        "forwarder",
    }
)
#: Typed by their key but not the subject: the other end of a connection, the account acted upon (Windows
#: ``TargetUserName``).
_RELATED_HOST_KEYS = frozenset({"destinationhostname"})
_RELATED_USER_KEYS = frozenset({"targetusername"})
#: An e-mail that is the whole value of one of these (or of a user key) is the subject user's address.
_SUBJECT_EMAIL_KEYS = frozenset(
    {
        "email",
        "emailaddress",
        "mail",
        "useremail",
        "accountemail",
        "employeeemail",
        "actoremail",
        "recipient",
        "recipients",
        "recipientemailaddress",
        "recipientaddress",
    }
)
#: An IP that is the whole value of one of these is the alert's remote/source address (Okta
#: ``client.ipAddress``, Entra ``ipAddress``, GuardDuty ``remoteIpDetails.ipAddressV4``, CloudTrail
#: ``sourceIPAddress``, an edge audit log's ``actor.ip``)...
_SUBJECT_IP_KEYS = frozenset(
    {
        "ip",
        "ipaddress",
        "ipaddressv4",
        "ipaddressv6",
        "ipv4",
        "ipv6",
        "srcip",
        "src",
        "srcaddr",
        "sourceip",
        "sourceipaddress",
        "sourceaddress",
        "clientip",
        "clientipaddress",
        "clientaddress",
        "remoteip",
        "remoteipaddress",
        "remoteaddress",
        "callerip",
        "calleripaddress",
        "callipaddress",
        "originip",
        "actorip",
        "userip",
    }
)
#: ...unless its parent says otherwise (GuardDuty ``localIpDetails``, Okta ``request.ipChain[]``, interfaces).
_NON_SUBJECT_IP_PARENT_PARTS = ("local", "chain", "interface", "destination", "dst", "private", "nat")
#: The destination of a connection is the remote end (a subject) when it is public, else just related.
_DESTINATION_IP_KEYS = frozenset(
    {"dst", "dstip", "dstaddr", "destip", "destinationip", "destinationipaddress", "destinationaddress", "targetip"}
)
#: Prose fields: even a value that is exactly an entity is attacker-writable text there.
_PROSE_KEYS = frozenset(
    {
        "description",
        "title",
        "message",
        "msg",
        "displaymessage",
        "summary",
        "details",
        "detail",
        "text",
        "body",
        "subject",
        "reason",
        "remediation",
        "recommendation",
        "recommendedaction",
        "rawuseragent",
        "useragent",
        "query",
    }
)

# --- patterns -------------------------------------------------------------------------------------------

_URL_RE = re.compile(r"(?i)\b(?:https?|hxxps?|ftps?)://[^\s\"'<>`{}|\\^]{1,2048}")
_IPV4_RE = re.compile(r"(?<![\w./])\d{1,3}(?:\.\d{1,3}){3}(?!\w|\.\d)")
_IPV6_CANDIDATE_RE = re.compile(r"(?<![\w:.%])[0-9A-Fa-f:.]{2,45}(?![\w:%]|\.\w)")
_HEX_RE = re.compile(r"(?<![\w-])[0-9A-Fa-f]{32,128}(?![\w-])")
_EMAIL_RE = re.compile(r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
_DOMAIN_RE = re.compile(r"(?<![\w.@/-])(?:[A-Za-z0-9_-]{1,63}\.)+[A-Za-z]{2,24}(?![\w@-]|\.[\w-])")
_KEY_VALUE_RE = re.compile(
    r"(?i)\b(user(?:name)?|upn|account(?:name)?|host(?:name)?|computer(?:name)?|device(?:name)?|machine(?:name)?"
    r"|machineid|deviceid)[ \t]*[:=][ \t]*\"?([^\s\",;'<>()\[\]{}]{1,256})"
)
#: Free-text keys that are ambiguous in JSON (``account`` is often an object there) but clear in prose.
_FREE_TEXT_KEY_ALIASES = {"account": "accountname", "device": "devicename", "machine": "machinename"}
_VERSION_WORD_RE = re.compile(r"([a-z]+)[\s:=]*$")
_VERSION_WORDS = frozenset({"v", "ver", "version", "build", "release", "firmware", "update", "agent"})
_DEVICE_ID_RE = re.compile(
    r"[0-9a-f]{40}|[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|i-[0-9a-f]{8,17}"
)
_HOST_RE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,252}")
_USER_RE = re.compile(r"[^\s\x00-\x1f\"'<>]{1,256}")
_DEFANG = (("[.]", "."), ("(.)", "."), ("{.}", "."), ("[:]", ":"), ("[@]", "@"), ("[at]", "@"))
_HASH_KIND_BY_LENGTH = {32: EntityKind.MD5S, 40: EntityKind.SHA1S, 64: EntityKind.SHA256S}

# Domains: a DNS name must end in a country-code TLD or one of these generic TLDs (URL hosts and e-mail
# domains are exempt: their context already says "DNS name"). This keeps .NET namespaces, file names
# ("invoice.pdf") and code identifiers out of the list at the cost of missing rare new gTLDs in free text.
# fmt: off
_GENERIC_TLDS = frozenset(
    {
        "com", "net", "org", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "aero", "coop", "museum", "mobi",
        "asia", "jobs", "tel", "travel", "xxx", "app", "dev", "page", "cloud", "online", "site", "website", "store",
        "shop", "tech", "space", "live", "life", "world", "today", "network", "systems", "services", "solutions",
        "digital", "email", "link", "click", "top", "xyz", "club", "buzz", "icu", "cyou", "rest", "monster", "lol",
        "quest", "sbs", "cfd", "bond", "fun", "vip", "work", "support", "help", "news", "blog", "media", "agency",
        "company", "group", "center", "zone", "download", "win", "bid", "loan", "racing", "review", "stream", "date",
        "trade", "party", "science", "men", "host", "press", "tokyo", "london", "berlin", "amazon", "google",
        "microsoft",
        "example",  # RFC 2606 reserved TLD: vendor samples and documentation use it for real-looking names
    }
)
# fmt: on
#: Two-letter or gTLD endings that are far more often file extensions; such names need three labels.
_FILE_LIKE_TLDS = frozenset({"js", "py", "sh", "ps", "md", "gz", "cs", "rb", "db", "so", "vb", "zip", "mov"})
_INTERNAL_TLDS = frozenset({"local", "localdomain", "internal", "lan", "corp", "home", "localhost", "arpa"})


def extract_entities(content: str) -> Entities:
    """Extract the entities of an alert body; JSON is walked with key-aware typing, anything else is text."""
    collector = _Collector()
    text = content[:MAX_CONTENT_CHARS] if isinstance(content, str) else ""
    document = _parse_json(text)
    if document is None:
        collector.scan_text(text, floor=Role.TEXT)
        collector.scan_key_values(text)
    else:
        for key, parent, floor, value in _walk(document):
            collector.add_keyed(key, parent, floor, value)
    return collector.result()


def _parse_json(text: str) -> object | None:
    """The decoded JSON object or array, or None when the content is not JSON (then it is free text)."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        document: object = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return document


def _walk(document: object) -> Iterator[tuple[str, str, Role, str]]:
    """Yield (key, parent key, role floor, string value) for every scalar; keys come normalised.

    Iterative, so deep nesting cannot recurse; the floor is the weakest role any ancestor key imposes
    (under ``comments`` everything is peripheral), carried down in O(1) per node so time stays linear.
    """
    stack: list[tuple[str, str, Role, object]] = [("", "", Role.SUBJECT, document)]
    while stack:
        key, parent, floor, node = stack.pop()
        if isinstance(node, dict):
            for child_key, child in reversed(node.items()):
                name = normalize_key(str(child_key))
                stack.append((name, key, max(floor, _key_floor(name)), child))
        elif isinstance(node, list):
            stack.extend((key, parent, floor, item) for item in reversed(node))
        elif isinstance(node, str):
            yield key, parent, floor, node


_KEY_NOISE_RE = re.compile(r"[\s_.\-]")


def normalize_key(key: str) -> str:
    """``userPrincipalName``, ``user_principal_name`` and ``User Principal.Name`` are one key."""
    return _KEY_NOISE_RE.sub("", key.lower())


def _key_floor(name: str) -> Role:
    """The weakest role a key imposes on everything below it."""
    if (
        name in _PERIPHERAL_EXACT_KEYS
        or name.startswith(_INFRA_KEY_PREFIXES)
        or any(part in name for part in _PEOPLE_KEY_PARTS)
        or name.startswith("note")
        or name.endswith(("note", "notes"))  # not "notEnabled"
    ):
        return Role.PERIPHERAL
    if name in _TARGET_KEYS:
        return Role.RELATED
    return Role.SUBJECT


def _refang(text: str) -> str:
    """Undo the common defanging analysts apply to IOCs (``evil[.]com``, ``hxxp://``)."""
    for defanged, plain in _DEFANG:
        if defanged in text:
            text = text.replace(defanged, plain)
    return text


def _ip_role(key: str, parent: str, value: str) -> Role:
    """Role of an address that is the whole value of ``key``: the remote/source address is the subject."""
    if key in _SUBJECT_IP_KEYS and not any(part in parent for part in _NON_SUBJECT_IP_PARENT_PARTS):
        return Role.SUBJECT
    if key in _DESTINATION_IP_KEYS and is_public_ip(value):
        return Role.SUBJECT
    return Role.RELATED


def _email_role(key: str) -> Role:
    """Role of an e-mail that is the whole value of ``key``: the address of the account that acted is a subject."""
    if key in _SUBJECT_EMAIL_KEYS or (key in _USER_KEYS and key not in _RELATED_USER_KEYS):
        return Role.SUBJECT
    return Role.RELATED


def is_public_ip(value: str) -> bool:
    """A globally routable address (not private, reserved, loopback or link-local); False for non-addresses."""
    try:
        return ipaddress.ip_address(value).is_global
    except ValueError:
        return False


#: Kinds whose first-named value is the person the alert is about (whom a checkpoint asks).
PEOPLE_KINDS = frozenset({EntityKind.EMAILS, EntityKind.USERS})


class _Collector:
    """Accumulates candidates per kind with their best role; validation on the way in, ordering on the way out.

    The cap applies per (kind, role), so prose stuffed with 500 addresses before the subject field cannot push
    the subject out; `result` keeps the best `MAX_PER_KIND` of each kind.
    """

    def __init__(self) -> None:
        self._found: dict[EntityKind, dict[str, Role]] = {kind: {} for kind in EntityKind}
        self._counts: dict[EntityKind, list[int]] = {kind: [0] * len(Role) for kind in EntityKind}

    def _add(self, kind: EntityKind, value: str, role: Role) -> None:
        bucket = self._found[kind]
        current = bucket.get(value)
        if current is None:
            counts = self._counts[kind]
            if counts[role] < MAX_PER_KIND:
                counts[role] += 1
                bucket[value] = role
        elif role < current:
            bucket[value] = role

    # -- keyed values (JSON) --

    def add_keyed(self, name: str, parent: str, floor: Role, value: str) -> None:
        """Type one string value by its (normalised) key and parent key; ``floor`` is its ancestors' role."""
        stripped = value.strip()
        if name in _DEVICE_ID_KEYS and self._add_device_id(stripped, floor):
            return
        if name in _HASH_KEYS and self._add_hash(stripped, _HASH_KEYS[name], floor):
            return
        if name in _HOST_KEYS or name in _INFRA_HOST_KEYS or (name in _FQDN_ONLY_HOST_KEYS and "." in stripped):
            role = Role.RELATED if name in _RELATED_HOST_KEYS else Role.SUBJECT
            if self._add_host(stripped, max(role, floor)):
                return
        if (name in _USER_KEYS and (name not in _UPN_ONLY_KEYS or "@" in stripped)) or (
            name == "name" and parent in _USER_PARENT_KEYS
        ):
            self._add_user(stripped, floor, related=name in _RELATED_USER_KEYS)
        identifier_key = name == "id" or name.endswith(("id", "ids", "arn"))  # ids are not hashes
        self.scan_text(
            value,
            floor=floor,
            key=name,
            parent=parent,
            ips=not any(part in name for part in _NO_IP_KEY_PARTS),
            hashes=not identifier_key,
        )

    def _add_device_id(self, value: str, floor: Role) -> bool:
        lowered = value.lower()
        if _DEVICE_ID_RE.fullmatch(lowered):
            self._add(EntityKind.DEVICE_IDS, lowered, floor)
            return True
        return False

    def _add_hash(self, value: str, kind: EntityKind, floor: Role) -> bool:
        lowered = value.lower()
        if _HASH_KIND_BY_LENGTH.get(len(lowered)) is kind and _HEX_RE.fullmatch(lowered):
            self._add(kind, lowered, floor)
            return True
        return False

    def _add_host(self, value: str, role: Role) -> bool:
        """Record a keyed host name; an address under a host key is an IP instead. False if not host-shaped."""
        if self._add_ip(value, role):
            return True
        lowered = value.lower().rstrip(".")
        if _HOST_RE.fullmatch(lowered) and lowered not in _PLACEHOLDER_VALUES and any(c.isalpha() for c in lowered):
            self._add(EntityKind.HOSTS, lowered, role)
            return True
        return False

    def _add_user(self, value: str, floor: Role, *, related: bool) -> None:
        lowered = value.lower()
        if lowered not in _PLACEHOLDER_VALUES and _USER_RE.fullmatch(lowered) and not lowered.isdigit():
            # A machine account (``WS-01$``) is the computer acting for itself, not a person to ask.
            role = Role.RELATED if related or lowered.endswith("$") else Role.SUBJECT
            self._add(EntityKind.USERS, lowered, max(role, floor))

    def _add_ip(self, value: str, role: Role) -> bool:
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if address.is_unspecified:
            return False
        self._add(EntityKind.IPS, address.compressed, role)
        return True

    # -- free text --

    def scan_key_values(self, text: str) -> None:
        """``user=alice host: ws-01`` in free text: the same key vocabulary as JSON, applied to key=value pairs.

        Typed, but never a subject: in a free-text alert anyone who wrote the text could have written the pair.
        """
        for match in _KEY_VALUE_RE.finditer(text):
            key = normalize_key(match.group(1))
            self.add_keyed(_FREE_TEXT_KEY_ALIASES.get(key, key), "", Role.RELATED, match.group(2))

    def scan_text(
        self, text: str, *, floor: Role, key: str = "", parent: str = "", ips: bool = True, hashes: bool = True
    ) -> None:
        """Regex-scan one string. A match that is the whole value takes its role from the key; else it is prose."""
        text = _refang(text)
        whole = "" if key in _PROSE_KEYS or key.endswith("commandline") else text.strip()
        self._scan_urls(text, whole, floor)
        if ips:
            self._scan_ips(text, whole, floor, key, parent)
        if hashes:
            for match in _HEX_RE.finditer(text):
                kind = _HASH_KIND_BY_LENGTH.get(len(match.group()))
                if kind is not None:
                    role = Role.RELATED if match.group() == whole else Role.TEXT
                    self._add(kind, match.group().lower(), max(role, floor))
        for match in _EMAIL_RE.finditer(text):
            role = _email_role(key) if match.group() == whole else Role.TEXT
            self._add_email(match.group(), max(role, floor))
        for match in _DOMAIN_RE.finditer(text):
            domain = _clean_domain(match.group(), require_known_tld=True)
            if domain is not None:
                role = Role.SUBJECT if match.group() == whole.rstrip(".") else Role.TEXT
                self._add(EntityKind.DOMAINS, domain, max(role, floor))

    def _scan_urls(self, text: str, whole: str, floor: Role) -> None:
        for match in _URL_RE.finditer(text):
            url = match.group().rstrip(".,;:!?)]'")
            role = max(Role.SUBJECT if url == whole else Role.TEXT, floor)
            if url.lower().startswith("hxxp"):
                url = "http" + url[4:]
            try:
                host = urlsplit(url).hostname
            except ValueError:
                continue
            if not host:
                continue
            self._add(EntityKind.URLS, url, role)
            if not self._add_ip(host, max(role, Role.RELATED)):  # a URL's address is not the remote peer
                domain = _clean_domain(host, require_known_tld=False)
                if domain is not None:
                    self._add(EntityKind.DOMAINS, domain, role)

    def _scan_ips(self, text: str, whole: str, floor: Role, key: str, parent: str) -> None:
        for match in _IPV4_RE.finditer(text):
            if not _follows_version_word(text, match.start()):
                candidate = match.group()
                role = _ip_role(key, parent, candidate) if candidate == whole else Role.TEXT
                self._add_ip(candidate, max(role, floor))
        for match in _IPV6_CANDIDATE_RE.finditer(text):
            candidate = match.group().rstrip(".")
            if candidate.count(":") >= 2:
                role = _ip_role(key, parent, candidate) if candidate == whole else Role.TEXT
                self._add_ip(candidate, max(role, floor))

    def _add_email(self, candidate: str, role: Role) -> None:
        local, _, domain_part = candidate.rpartition("@")
        domain = _clean_domain(domain_part, require_known_tld=False)
        if domain is not None and local:
            self._add(EntityKind.EMAILS, f"{local.lower()}@{domain}", role)

    def result(self) -> Entities:
        found = self._found
        hosts = found[EntityKind.HOSTS]
        for domain in [value for value in found[EntityKind.DOMAINS] if value in hosts]:
            del found[EntityKind.DOMAINS][domain]
        lists = {kind: self._ordered(kind) for kind in EntityKind}
        subjects = {
            kind.value: subject
            for kind, values in lists.items()
            if (subject := [value for value in values if found[kind][value] == Role.SUBJECT])
        }
        return Entities(
            ips=lists[EntityKind.IPS],
            domains=lists[EntityKind.DOMAINS],
            urls=lists[EntityKind.URLS],
            md5s=lists[EntityKind.MD5S],
            sha1s=lists[EntityKind.SHA1S],
            sha256s=lists[EntityKind.SHA256S],
            emails=lists[EntityKind.EMAILS],
            users=lists[EntityKind.USERS],
            hosts=lists[EntityKind.HOSTS],
            device_ids=lists[EntityKind.DEVICE_IDS],
            subjects=subjects,
        )

    def _ordered(self, kind: EntityKind) -> list[str]:
        """Best role first, then value order (IPs numeric with public first; people in the order the alert names
        them, so its own user field comes before the accounts in its event list; the rest alphabetical); capped."""
        bucket = self._found[kind]
        if kind is EntityKind.IPS:
            return sorted(bucket, key=lambda value: (bucket[value], *_ip_sort_key(value)))[:MAX_PER_KIND]
        if kind in PEOPLE_KINDS:
            return sorted(bucket, key=lambda value: bucket[value])[:MAX_PER_KIND]  # stable: first seen first
        return sorted(bucket, key=lambda value: (bucket[value], value))[:MAX_PER_KIND]


def _follows_version_word(text: str, start: int) -> bool:
    """True for ``version 1.0.0.0`` / ``build: 10.0.0.1``: dotted quads there are versions, not addresses."""
    match = _VERSION_WORD_RE.search(text[max(0, start - 24) : start].lower())
    return match is not None and match.group(1) in _VERSION_WORDS


def _clean_domain(candidate: str, *, require_known_tld: bool) -> str | None:
    """Lower-cased DNS name, or None when it is not a plausible public DNS name (file name, internal, junk)."""
    domain = candidate.lower().rstrip(".")
    labels = domain.split(".")
    if len(labels) < 2 or len(domain) > 253:
        return None
    if any(not label or len(label) > 63 or label.startswith("-") or label.endswith("-") for label in labels):
        return None
    tld = labels[-1]
    if not tld.isalpha() or len(tld) < 2 or tld in _INTERNAL_TLDS:
        return None
    if tld in _FILE_LIKE_TLDS and len(labels) < 3:
        return None
    if require_known_tld and not (len(tld) == 2 or tld in _GENERIC_TLDS):
        return None
    return domain


def _ip_sort_key(value: str) -> tuple[int, int, int]:
    """Public addresses first (they are what reputation and sign-in lookups need), then by family and value."""
    address = ipaddress.ip_address(value)
    return (0 if address.is_global else 1, address.version, int(address))
