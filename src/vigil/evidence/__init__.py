"""The analyst's common vocabulary, shared by the reasoning in `ai/` and the vendor folders that feed it.

An integration folder tells the analyst what its skills mean (`knowledge.py`: lookups per entity, how its
evidence maps onto common record kinds, its own readers, containment that uses its write skills); readers
turn a step's output into `Signal`s (`signals.py`) with the tolerant record readers of `records.py`. Nothing
here names a vendor or reasons about a verdict: that is `ai/builtin/`.
"""
