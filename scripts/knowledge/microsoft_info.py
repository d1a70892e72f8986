"""merill/microsoft-info -> the `identity` bundle: Microsoft first-party app ids and Graph permission scopes.

Apps: ``_info/MicrosoftApps.json`` (id -> display name). Scopes: ``_info/GraphDelegateRoles.json`` (delegated,
admin-consent description, whether only an admin may grant it) and ``_info/GraphAppRoles.json`` (application
permissions, always admin-granted). Tiers are derived at run time by `vigil.knowledge.identity.scope_tier`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from _licensed import write_licensed_bundle
from gittree import GitTree, Pin

from vigil.knowledge.bundle import Provenance
from vigil.knowledge.identity import BUNDLE, DATA_FILE, LICENCE_FILE, scope_tier

PIN = Pin(repo="merill/microsoft-info", commit="43b8a5d9fb6648f3ef36ec051acd988fdd19558b")


def build(tree: GitTree, out: Path) -> Provenance:
    apps = {
        str(app["AppId"]).lower(): str(app["AppDisplayName"])
        for app in json.loads(tree.text("_info/MicrosoftApps.json"))
        if app.get("AppId")
    }
    delegated = {
        str(role["Value"]): [str(role["AdminConsentDescription"] or ""), role["Type"] == "Admin"]
        for role in json.loads(tree.text("_info/GraphDelegateRoles.json"))
        if role.get("Value") and role.get("IsEnabled", True)
    }
    application = {
        str(role["Value"]): [str(role["Description"] or ""), True]
        for role in json.loads(tree.text("_info/GraphAppRoles.json"))
        if role.get("Value") and role.get("IsEnabled", True)
    }
    tiers = Counter(scope_tier(value, admin_consent=admin).name.lower() for value, (_, admin) in delegated.items())
    return write_licensed_bundle(
        out,
        tree,
        PIN,
        name=BUNDLE,
        title="Microsoft first-party application ids and Graph permission scopes",
        licence="MIT",
        licence_file=LICENCE_FILE,
        counts={
            "first_party_apps": len(apps),
            "delegated_scopes": len(delegated),
            "application_permissions": len(application),
            **{f"delegated_{tier}": count for tier, count in sorted(tiers.items())},
        },
        notes="Scope risk tiers: vigil.knowledge.identity.scope_tier (docs/analyst.md).",
        payloads={DATA_FILE: {"apps": apps, "delegated": delegated, "application": application}},
    )
