"""Write tests/knowledge/sigma_regression.json.gz: SigmaHQ's regression samples (regression_data/) for the rules
the bundle ships, each rule with the sample's event fields and the upstream match_count.

`python scripts/knowledge/_sigma_regression.py --mirror DIR` (same DIR as build.py; same pinned commit).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gittree import GitTree  # noqa: E402
from sigma import PIN, WINDOWS_CATEGORIES, logsource_key  # noqa: E402

#: The Sysmon event id of each Windows category: a sample file may hold events of several kinds.
SYSMON_EVENT_IDS = {
    "process_creation": {1},
    "network_connection": {3},
    "image_load": {7},
    "file_event": {11},
    "registry_event": {12, 13, 14},
    "registry_add": {12},
    "registry_delete": {12},
    "registry_set": {13},
    "dns_query": {22},
    "ps_script": {4104},
}
OUT = HERE.parents[1] / "tests" / "knowledge" / "sigma_regression.json.gz"


def _events(text: str) -> list[dict[str, Any]]:
    """A sample file: one or more JSON documents one after another."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while (at := len(text) - len(text[at:].lstrip())) < len(text):
        document, at = decoder.raw_decode(text, at)
        found.append(document)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mirror", type=Path, required=True)
    tree = GitTree(parser.parse_args().mirror / PIN.repo.replace("/", "+") / "repo", PIN.commit)
    rules = {}
    for path in tree.files("rules"):
        if path.endswith(".yml"):
            rule = yaml.safe_load(tree.text(path))
            if isinstance(rule, dict) and logsource_key(rule.get("logsource") or {}):
                rules[str(rule["id"])] = rule["logsource"].get("category")
    samples = []
    for info_path in tree.files("regression_data/rules"):
        if not info_path.endswith("info.yml"):
            continue
        info = yaml.safe_load(tree.text(info_path))
        for meta in info.get("rule_metadata", []):
            category = rules.get(str(meta["id"]))
            if category not in WINDOWS_CATEGORIES:
                continue
            for test in info.get("regression_tests_info", []):
                events = _events(tree.text(test["path"].removesuffix(".evtx") + ".json"))
                wanted = SYSMON_EVENT_IDS[category]
                data = [e["Event"]["EventData"] for e in events if e["Event"]["System"]["EventID"] in wanted]
                samples.append(
                    {
                        "id": str(meta["id"]),
                        "title": meta["title"],
                        "match_count": test.get("match_count", 1),
                        "events": data,
                    }
                )
    payload = {"source": PIN.url, "commit": PIN.commit, "licence": "DRL-1.1", "samples": samples}
    OUT.write_bytes(gzip.compress(json.dumps(payload, sort_keys=True).encode("utf-8"), mtime=0))
    print(f"{len(samples)} samples -> {OUT}")


if __name__ == "__main__":
    main()
