"""Why a figure misses its target: the lead's explanations, printed in the note column of docs/benchmarks.md.

Keys are "<section> / <figure name>" exactly as the tables show them, e.g.
"E1 intake (PostgreSQL) / Vigil untyped: p99 at 50 % of saturation". A row that misses its target and has
no entry here says "explanation pending".
"""

from __future__ import annotations

NOTES: dict[str, str] = {}
