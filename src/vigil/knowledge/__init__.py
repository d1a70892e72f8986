"""Public security knowledge the analyst carries: pinned, licence-respecting snapshots of community sources.

Every bundle lives in its own folder under ``data/`` with a ``provenance.json`` (source, commit, date, licence,
counts) and is built by ``scripts/knowledge/`` from the upstream repository at a pinned commit; nothing is
downloaded at run time. Loaders read a bundle once, lazily, on first use.
"""
