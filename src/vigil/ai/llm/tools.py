"""Skills as model tools: provider-safe names mapped explicitly both ways, read-only skills only.

OpenAI refuses tool names outside `^[a-zA-Z0-9_-]{1,64}$` and skill ids have dots
(`<integration>.<snake_name>`), so each skill gets a derived name and every tool call is mapped back through
this index, never by string guessing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic_ai.tools import ToolDefinition

from vigil.ai.schemas import AvailableSkill

#: pydantic-ai's conventional name for the structured-output tool; no skill may take it.
OUTPUT_TOOL = "final_result"
MAX_TOOL_NAME = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def tool_name(skill_id: str) -> str:
    """`<integration>.<snake_name>` → `<integration>_<snake_name>` (and a legacy display name such as
    `List Machines` → `list_machines`); always matches the strictest provider's pattern."""
    name = _UNSAFE.sub("_", skill_id.strip()).strip("_").lower() or "skill"
    return name[:MAX_TOOL_NAME]


@dataclass(frozen=True)
class ToolIndex:
    """The read-only skills offered to the model, by tool name."""

    by_name: dict[str, AvailableSkill]

    @classmethod
    def of(cls, skills: Sequence[AvailableSkill]) -> ToolIndex:
        """Read-only skills only: a write skill is never a tool, whatever the model asks for."""
        by_name: dict[str, AvailableSkill] = {}
        for skill in skills:
            if skill.writes:
                continue
            base = tool_name(skill.skill_id)
            name, n = base, 2
            while name in by_name or name == OUTPUT_TOOL:
                suffix = f"_{n}"
                name, n = base[: MAX_TOOL_NAME - len(suffix)] + suffix, n + 1
            by_name[name] = skill
        return cls(by_name)

    def definitions(self) -> list[ToolDefinition]:
        return [
            ToolDefinition(
                name=name,
                description=f"{skill.purpose or skill.skill_id} (read-only skill {skill.skill_id!r}, "
                f"integration {skill.integration_id})",
                parameters_json_schema=skill.input_schema or {"type": "object", "properties": {}},
            )
            for name, skill in self.by_name.items()
        ]
