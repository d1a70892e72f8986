#!/usr/bin/env bash
# `vigil eval` is part of the product: in a throw-away virtualenv with only `pip install .` (no -e, no dev extras,
# so no pytest), `vigil eval --fast` runs from a directory outside the checkout and writes its report.
# Usage: scripts/check-installed-eval.sh   (PYTHON=python3.12 to pick the interpreter)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d -t vigil-installed-eval.XXXXXX)"
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

# The checkout's files (tracked, and new ones git does not ignore) copied aside, so the build neither reads a stale
# build/ nor leaves one behind.
mkdir "$work/source"
git -C "$repo" ls-files -z --cached --others --exclude-standard | (cd "$repo" && tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$work/source"
"${PYTHON:-python3}" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --upgrade pip
"$work/venv/bin/pip" install --quiet "$work/source"
rm -rf "$work/source"
installed=$(date +%s)

cd "$work"  # outside the checkout: nothing of it is importable from here
if "$work/venv/bin/python" -c "import pytest" 2>/dev/null; then
    echo "check-installed-eval: pytest is installed, so this is not a plain install" >&2
    exit 1
fi
location=$("$work/venv/bin/python" -c "import vigil.evaluation as e; print(e.__file__)")
case "$location" in
    "$work/venv/"*) ;;
    *) echo "check-installed-eval: vigil.evaluation comes from $location, not the installed package" >&2; exit 1 ;;
esac

# Only the command's own settings: no database, model or vendor URLs inherited from the caller's environment.
env -i PATH="$work/venv/bin:/usr/bin:/bin" HOME="$work" "$work/venv/bin/vigil" eval --fast \
    --output "$work/reports/evaluation.md"
report="$work/reports/evaluation.md"
grep -q '^| \*\*total\*\* |' "$report" || { echo "check-installed-eval: no totals table in $report" >&2; exit 1; }
rows=$(grep -c ' | pass |$' "$report" || true)
finished=$(date +%s)
echo "check-installed-eval: ok: $rows scenario(s) passed; install $((installed - started)) s," \
    "vigil eval --fast $((finished - installed)) s"
