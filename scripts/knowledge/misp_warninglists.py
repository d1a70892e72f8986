"""MISP warning lists -> the `network` bundle: who an address or domain belongs to (cloud, scanner, VPN, ...).

Only the lists that tell an analyst what an address *is* are kept, each with the kind of context it gives
(`vigil.knowledge.network.ListKind`). Ranges are merged and stored as integer (start, end) pairs per family,
so the loader bisects them; domains are stored without a leading ``.``/``www.`` and match as suffixes.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path
from typing import Any

from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance, write_bundle
from vigil.knowledge.network import BUNDLE, DATA_FILE, ListKind

PIN = Pin(repo="MISP/misp-warninglists", commit="84f0610aaf3b32159285c9b85510d0f415ea6b27")

#: List id -> (kind, provider or owner as findings name it, the service when the list is one service's ranges,
#: whether that service is a CI/build or webhook service). At this pin the AWS list keeps no `service` per
#: prefix and GitHub's is the union of its meta keys (web, api, git, hooks, pages, importer, actions).
CLOUD: dict[str, tuple[str, str | None]] = {
    "amazon-aws": ("Amazon Web Services", None),
    "google-gcp": ("Google Cloud", None),
    "microsoft-azure": ("Microsoft Azure", None),
    "oracle-oci": ("Oracle Cloud Infrastructure", None),
    "cloudflare": ("Cloudflare", "edge network (proxy, Workers)"),
}
SERVICES: dict[str, tuple[str, str]] = {
    "github": ("GitHub", "web, API, git, webhooks and Actions runners"),
    "microsoft-office365-ip": ("Microsoft 365", "Exchange Online, SharePoint, Teams"),
}
ANONYMISERS = ("vpn-ipv4", "vpn-ipv6")
RESOLVERS = ("public-dns-v4", "public-dns-v6")
SIMULATION = ("microsoft-attack-simulator",)
DOMAIN_LISTS = {"url-shortener": ListKind.SHORTENER, "dynamic-dns": ListKind.DYNAMIC_DNS}
#: Scanner lists are chosen by name: every published or telescope-observed scanner range.
SCANNER_MARKERS = ("scanning", "scanner", "tenable-cloud", "cortex-xpanse", "connection-attempts")
SCANNER_NAMED = ("shadowserver",)


def _kind_of(list_id: str) -> ListKind | None:
    if list_id in CLOUD:
        return ListKind.CLOUD
    if list_id in SERVICES:
        return ListKind.SERVICE
    if list_id in ANONYMISERS:
        return ListKind.ANONYMISER
    if list_id in RESOLVERS:
        return ListKind.RESOLVER
    if list_id in SIMULATION:
        return ListKind.SIMULATION
    if list_id in DOMAIN_LISTS:
        return DOMAIN_LISTS[list_id]
    if list_id in SCANNER_NAMED or any(marker in list_id for marker in SCANNER_MARKERS):
        return ListKind.SCANNER
    return None


def _merged(networks: list[ipaddress.IPv4Network] | list[ipaddress.IPv6Network]) -> list[int]:
    """Adjacent and overlapping ranges collapsed, flattened to [start, end, start, end, ...] (inclusive)."""
    flat: list[int] = []
    for network in ipaddress.collapse_addresses(networks):
        start, end = int(network.network_address), int(network.broadcast_address)
        if flat and start <= flat[-1] + 1:
            flat[-1] = max(flat[-1], end)
        else:
            flat.extend((start, end))
    return flat


def _split(values: list[str]) -> tuple[list[int], list[int], list[str]]:
    """A list's entries as merged v4 ranges, merged v6 ranges and domains."""
    v4: list[ipaddress.IPv4Network] = []
    v6: list[ipaddress.IPv6Network] = []
    domains: set[str] = set()
    for raw in values:
        value = raw.strip().lower()
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            domain = value.lstrip(".").removeprefix("www.")
            if domain and "/" not in domain:
                domains.add(domain)
            continue
        (v4 if isinstance(network, ipaddress.IPv4Network) else v6).append(network)
    return _merged(v4), _merged(v6), sorted(domains)


def _owner(list_id: str, name: str) -> tuple[str, str | None]:
    if list_id in CLOUD:
        return CLOUD[list_id]
    if list_id in SERVICES:
        return SERVICES[list_id]
    return name, None


def build(tree: GitTree, out: Path) -> Provenance:
    lists: dict[str, dict[str, Any]] = {}
    for path in tree.files("lists"):
        list_id = path.split("/")[1]
        kind = _kind_of(list_id)
        if not path.endswith("/list.json") or kind is None:
            continue
        document = json.loads(tree.text(path))
        v4, v6, domains = _split([str(value) for value in document["list"]])
        owner, service = _owner(list_id, str(document["name"]))
        lists[list_id] = {
            "name": document["name"],
            "kind": kind.value,
            "owner": owner,
            "service": service,
            "version": int(document["version"]),
            "v4": v4,
            "v6": [str(value) for value in v6],  # 128-bit integers as text: JSON readers elsewhere lose them
            "domains": domains,
        }
    counts = {
        "lists": len(lists),
        "ipv4_ranges": sum(len(entry["v4"]) // 2 for entry in lists.values()),
        "ipv6_ranges": sum(len(entry["v6"]) // 2 for entry in lists.values()),
        "domains": sum(len(entry["domains"]) for entry in lists.values()),
    }
    provenance = Provenance(
        name=BUNDLE,
        title="MISP warning lists: cloud, SaaS, scanner, VPN, resolver, phishing-simulation ranges and domains",
        source=PIN.url,
        commit=tree.commit,
        date=tree.date(),
        licence="CC0-1.0",
        counts=counts,
        files=[DATA_FILE],
        notes="Lists chosen by kind (scripts/knowledge/misp_warninglists.py); ranges merged. "
        "The AWS list keeps no per-prefix service at this commit.",
    )
    write_bundle(out, provenance, {DATA_FILE: {"lists": lists}})
    return provenance
