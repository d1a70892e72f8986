"""Pick the investigator for the configured `VIGIL_AI_MODEL`."""

from __future__ import annotations

from vigil.ai.builtin import BuiltinInvestigator
from vigil.ai.errors import UnsupportedModelError
from vigil.ai.investigator import Investigator

BUILTIN_MODEL = "builtin"


def get_investigator(model: str) -> Investigator:
    """The builtin analyst for ``builtin``; any other model string raises `UnsupportedModelError` for now."""
    if model.strip().lower() == BUILTIN_MODEL:
        return BuiltinInvestigator()
    raise UnsupportedModelError(model)
