#!/usr/bin/env bash
# Make sure the local PostgreSQL the test suite uses is accepting connections (starts it if down).
set -euo pipefail
url="${VIGIL_TEST_PG_URL:-postgresql://postgres@127.0.0.1:5432/postgres}"
ready() { pg_isready -q -d "$url" 2>/dev/null; }
if ready; then exit 0; fi
if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
  for version in $(ls /etc/postgresql); do
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  done
fi
for _ in $(seq 1 30); do ready && exit 0; sleep 1; done
echo "PostgreSQL is not reachable at $url; the suite runs every storage test on it too." >&2
exit 1
