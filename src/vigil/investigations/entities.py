"""Pull investigable entities (IPs, domains, URLs, hashes, emails, users, hosts, device ids) out of an alert.

Alert content is JSON text more often than not, and there the *key* says what a value is: a 40-hex string
under ``machineId`` is a device, under ``sha1`` a hash. Everything else falls back to regexes over the text.
The regexes are written without nested ambiguous quantifiers so a hostile 256 KiB alert costs linear time,
and nothing in here raises: a broken alert must still be investigated. Conventions are in docs/analyst.md.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterator
from enum import StrEnum
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

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


class Entities(BaseModel):
    """Entities of one alert: every list sorted and de-duplicated (IPs: public addresses first)."""

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

    def of(self, kind: EntityKind) -> list[str]:
        """The list for one kind, for code that iterates over kinds instead of naming fields."""
        values: list[str] = getattr(self, kind.value)
        return values

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
    }
)
#: A ``name`` key counts as a user name only inside one of these objects (``relatedUser.name``).
_USER_PARENT_KEYS = frozenset({"user", "relateduser", "account", "useridentity"})
_HOST_KEYS = frozenset(
    {
        "hostname",
        "host",
        "computerdnsname",
        "devicename",
        "computername",
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
        collector.scan_text(text)
        collector.scan_key_values(text)
    else:
        for key, parent, value in _walk(document):
            collector.add_keyed(key, parent, value)
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


def _walk(document: object) -> Iterator[tuple[str, str, str]]:
    """Yield (key, parent key, string value) for every scalar, iteratively so deep nesting cannot recurse."""
    stack: list[tuple[str, str, object]] = [("", "", document)]
    while stack:
        key, parent, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((str(child_key), key, child) for child_key, child in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((key, parent, item) for item in reversed(node))
        elif isinstance(node, str):
            yield key, parent, node


def _normalize_key(key: str) -> str:
    return re.sub(r"[\s_.\-]", "", key.lower())


def _refang(text: str) -> str:
    """Undo the common defanging analysts apply to IOCs (``evil[.]com``, ``hxxp://``)."""
    for defanged, plain in _DEFANG:
        if defanged in text:
            text = text.replace(defanged, plain)
    return text


class _Collector:
    """Accumulates candidates per kind; validation happens on the way in, ordering on the way out."""

    def __init__(self) -> None:
        self._found: dict[EntityKind, set[str]] = {kind: set() for kind in EntityKind}

    def _add(self, kind: EntityKind, value: str) -> None:
        bucket = self._found[kind]
        if len(bucket) < MAX_PER_KIND:
            bucket.add(value)

    # -- keyed values (JSON) --

    def add_keyed(self, key: str, parent: str, value: str) -> None:
        name = _normalize_key(key)
        stripped = value.strip()
        if name in _DEVICE_ID_KEYS and self._add_device_id(stripped):
            return
        if name in _HASH_KEYS and self._add_hash(stripped, _HASH_KEYS[name]):
            return
        if name in _HOST_KEYS and self._add_host(stripped):
            return
        if name in _USER_KEYS or (name == "name" and _normalize_key(parent) in _USER_PARENT_KEYS):
            self._add_user(stripped)
        identifier_key = name == "id" or name.endswith(("id", "ids", "arn"))  # ids are not hashes
        self.scan_text(
            value,
            ips=not any(part in name for part in _NO_IP_KEY_PARTS),
            hashes=not identifier_key,
        )

    def _add_device_id(self, value: str) -> bool:
        lowered = value.lower()
        if _DEVICE_ID_RE.fullmatch(lowered):
            self._add(EntityKind.DEVICE_IDS, lowered)
            return True
        return False

    def _add_hash(self, value: str, kind: EntityKind) -> bool:
        lowered = value.lower()
        if _HASH_KIND_BY_LENGTH.get(len(lowered)) is kind and _HEX_RE.fullmatch(lowered):
            self._add(kind, lowered)
            return True
        return False

    def _add_host(self, value: str) -> bool:
        """Record a keyed host name; an address under a host key is an IP instead. False if not host-shaped."""
        if self._add_ip(value):
            return True
        lowered = value.lower().rstrip(".")
        if _HOST_RE.fullmatch(lowered) and lowered not in _PLACEHOLDER_VALUES and any(c.isalpha() for c in lowered):
            self._add(EntityKind.HOSTS, lowered)
            return True
        return False

    def _add_user(self, value: str) -> None:
        lowered = value.lower()
        if lowered not in _PLACEHOLDER_VALUES and _USER_RE.fullmatch(lowered) and not lowered.isdigit():
            self._add(EntityKind.USERS, lowered)

    def _add_ip(self, value: str) -> bool:
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if address.is_unspecified:
            return False
        self._add(EntityKind.IPS, address.compressed)
        return True

    # -- free text --

    def scan_key_values(self, text: str) -> None:
        """``user=alice host: ws-01`` in free text: the same key vocabulary as JSON, applied to key=value pairs."""
        for match in _KEY_VALUE_RE.finditer(text):
            key = _normalize_key(match.group(1))
            self.add_keyed(_FREE_TEXT_KEY_ALIASES.get(key, key), "", match.group(2))

    def scan_text(self, text: str, *, ips: bool = True, hashes: bool = True) -> None:
        text = _refang(text)
        self._scan_urls(text)
        if ips:
            self._scan_ips(text)
        if hashes:
            for match in _HEX_RE.finditer(text):
                kind = _HASH_KIND_BY_LENGTH.get(len(match.group()))
                if kind is not None:
                    self._add(kind, match.group().lower())
        for match in _EMAIL_RE.finditer(text):
            self._add_email(match.group())
        for match in _DOMAIN_RE.finditer(text):
            domain = _clean_domain(match.group(), require_known_tld=True)
            if domain is not None:
                self._add(EntityKind.DOMAINS, domain)

    def _scan_urls(self, text: str) -> None:
        for match in _URL_RE.finditer(text):
            url = match.group().rstrip(".,;:!?)]'")
            if url.lower().startswith("hxxp"):
                url = "http" + url[4:]
            try:
                host = urlsplit(url).hostname
            except ValueError:
                continue
            if not host:
                continue
            self._add(EntityKind.URLS, url)
            if not self._add_ip(host):
                domain = _clean_domain(host, require_known_tld=False)
                if domain is not None:
                    self._add(EntityKind.DOMAINS, domain)

    def _scan_ips(self, text: str) -> None:
        for match in _IPV4_RE.finditer(text):
            if not _follows_version_word(text, match.start()):
                self._add_ip(match.group())
        for match in _IPV6_CANDIDATE_RE.finditer(text):
            candidate = match.group().rstrip(".")
            if candidate.count(":") >= 2:
                self._add_ip(candidate)

    def _add_email(self, candidate: str) -> None:
        local, _, domain_part = candidate.rpartition("@")
        domain = _clean_domain(domain_part, require_known_tld=False)
        if domain is not None and local:
            self._add(EntityKind.EMAILS, f"{local.lower()}@{domain}")

    def result(self) -> Entities:
        found = self._found
        domains = found[EntityKind.DOMAINS] - found[EntityKind.HOSTS]
        return Entities(
            ips=sorted(found[EntityKind.IPS], key=_ip_sort_key),
            domains=sorted(domains),
            urls=sorted(found[EntityKind.URLS]),
            md5s=sorted(found[EntityKind.MD5S]),
            sha1s=sorted(found[EntityKind.SHA1S]),
            sha256s=sorted(found[EntityKind.SHA256S]),
            emails=sorted(found[EntityKind.EMAILS]),
            users=sorted(found[EntityKind.USERS]),
            hosts=sorted(found[EntityKind.HOSTS]),
            device_ids=sorted(found[EntityKind.DEVICE_IDS]),
        )


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
