"""Language-model investigators through pydantic-ai: drafting, tool-using analysis, budgets and fallbacks."""
