"""SigmaHQ core rules for the log sources Vigil's evidence maps onto: Windows endpoint telemetry and the
cloud/identity audit logs alerts carry (Okta, Entra, Azure, M365, AWS CloudTrail, GCP, Google Workspace,
GitHub). Each rule keeps what matching and a DRL 1.1 citation need; the licence text ships beside the data."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance, write_bundle

PIN = Pin(repo="SigmaHQ/sigma", commit="8eaafff1f2845a696050e05e72ba1140ee190698")
#: The Detection Rule License lives in its own repository; read from the same mirror folder.
LICENCE_PIN = Pin(repo="SigmaHQ/Detection-Rule-License", commit="bcbdc605172d00390572cd774ba395ec9e975dfc")
LICENCE_FILE = "LICENSE.Detection.Rules.md"
RULES_FILE = "rules.json.gz"

#: Windows telemetry categories an EDR's rows and alerts map onto.
WINDOWS_CATEGORIES = frozenset(
    {
        "process_creation",
        "image_load",
        "dns_query",
        "network_connection",
        "registry_set",
        "registry_event",
        "registry_add",
        "registry_delete",
        "ps_script",
        "file_event",
    }
)
#: Cloud and identity (product, service) pairs; a service ending in "." takes every service with that prefix.
CLOUD_SERVICES = frozenset(
    {
        ("azure", "signinlogs"),
        ("azure", "auditlogs"),
        ("azure", "activitylogs"),
        ("azure", "riskdetection"),
        ("m365", "threat_management"),
        ("m365", "audit"),
        ("okta", "okta"),
        ("aws", "cloudtrail"),
        ("gcp", "gcp.audit"),
        ("gcp", "google_workspace."),
        ("github", "audit"),
    }
)
KEPT_FIELDS = ("id", "title", "author", "level", "status", "tags", "falsepositives", "logsource", "detection")
RETIRED = frozenset({"deprecated", "unsupported"})


def logsource_key(logsource: dict[str, Any]) -> str | None:
    """The bundle's name for a rule's log source ("windows/process_creation", "okta/okta"), or None if not kept."""
    product, category, service = (str(logsource.get(k) or "") for k in ("product", "category", "service"))
    if product == "windows" and category in WINDOWS_CATEGORIES and not service:
        return f"windows/{category}"
    for wanted_product, wanted_service in CLOUD_SERVICES:
        prefix = wanted_service.endswith(".")
        matches = service.startswith(wanted_service) if prefix else service == wanted_service
        if product == wanted_product and matches and not category:
            return f"{product}/{service}"
    return None


def _rules(tree: GitTree) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    for path in tree.files("rules"):
        if not path.endswith((".yml", ".yaml")):
            continue
        for document in yaml.safe_load_all(tree.text(path)):
            if not isinstance(document, dict) or not isinstance(document.get("logsource"), dict):
                continue
            if logsource_key(document["logsource"]) is None or document.get("status") in RETIRED:
                continue
            rule = {name: document[name] for name in KEPT_FIELDS if name in document}
            rule["id"] = str(rule["id"])
            rule["path"] = path  # DRL 1.1 asks for a link to the rule where practicable
            kept.append(rule)
    return sorted(kept, key=lambda rule: str(rule["id"]))


def build(tree: GitTree, out: Path) -> Provenance:
    rules = _rules(tree)
    licence = GitTree(tree.git_dir.parents[1] / LICENCE_PIN.repo.replace("/", "+") / "repo", LICENCE_PIN.commit)
    per_source = Counter(logsource_key(rule["logsource"]) for rule in rules)
    provenance = Provenance(
        name="sigma",
        title="SigmaHQ detection rules (core: Windows endpoint, cloud and identity)",
        source=PIN.url,
        commit=PIN.commit,
        date=tree.date(),
        licence="DRL-1.1",
        licence_file=LICENCE_FILE,
        counts={"rules": len(rules)} | {f"logsource:{key}": n for key, n in sorted(per_source.items()) if key},
        files=[RULES_FILE, LICENCE_FILE],
        notes=(
            "Every match Vigil shows names the rule's title, id and author (DRL 1.1). "
            f"Licence text from {LICENCE_PIN.url} at {LICENCE_PIN.commit}."
        ),
    )
    folder = write_bundle(out, provenance, {RULES_FILE: {"rules": rules}})
    (folder / LICENCE_FILE).write_bytes(licence.read(LICENCE_FILE))
    return provenance
