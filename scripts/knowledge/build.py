"""Rebuild the knowledge bundles from pinned upstream commits: `python scripts/knowledge/build.py --mirror DIR`."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "src"))

from gittree import GitTree  # noqa: E402

from vigil.knowledge.bundle import DATA_DIR  # noqa: E402


def builders() -> list[str]:
    """Every builder module beside this script (one per upstream source)."""
    return sorted(
        p.stem for p in HERE.glob("*.py") if p.stem not in {"build", "gittree"} and not p.stem.startswith("_")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mirror", type=Path, required=True, help="folder of <owner>+<name>/repo git directories")
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    parser.add_argument("sources", nargs="*", help=f"default: all of {', '.join(builders())}")
    args = parser.parse_args()
    for name in args.sources or builders():
        module = importlib.import_module(name)
        git_dir = args.mirror / module.PIN.repo.replace("/", "+") / "repo"
        provenance = module.build(GitTree(git_dir, module.PIN.commit), args.out)
        print(f"{provenance.name}: {provenance.commit[:12]} {provenance.date} {provenance.licence} {provenance.counts}")


if __name__ == "__main__":
    main()
