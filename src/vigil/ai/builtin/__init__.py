"""The built-in rule-based analyst (``VIGIL_AI_MODEL=builtin``)."""

from vigil.ai.builtin.investigator import BuiltinInvestigator

__all__ = ["BuiltinInvestigator"]
