"""Checks a playbook's steps against the skill catalog without touching the database (editor, API, AI drafts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jinja2 import TemplateSyntaxError
from jinja2.sandbox import SandboxedEnvironment
from pydantic import BaseModel

from vigil.integrations.catalog import skill_name
from vigil.playbooks.schemas import CheckpointStep, PlaybookDefinition, SkillStep

# Parses (never renders) step templates at save time, so a typo fails the edit instead of the next alert.
_TEMPLATES = SandboxedEnvironment(autoescape=False)


def step_problems(definition: PlaybookDefinition, skill_inputs: Mapping[str, type[BaseModel]]) -> list[dict[str, Any]]:
    """Template syntax errors in any step, and input names a skill does not declare or requires but lacks."""
    problems: list[dict[str, Any]] = []

    def problem(index: int, where: str, message: str) -> None:
        problems.append({"field": f"steps.{index}.{where}", "message": message})

    for index, step in enumerate(definition.steps):
        templates: dict[str, str] = {}
        if isinstance(step, SkillStep):
            templates = {f"inputs.{name}": value for name, value in step.inputs.items()}
            model = skill_inputs.get(step.skill)
            for name, message in _input_problems(step, model) if model is not None else []:
                problem(index, f"inputs.{name}", message)
        elif isinstance(step, CheckpointStep):
            templates = {"user_email": step.user_email, "question": step.question}
        for where, template in templates.items():
            try:
                _TEMPLATES.parse(template)
            except TemplateSyntaxError as error:
                name = where.removeprefix("inputs.")
                label = f"Input {name!r}" if where.startswith("inputs.") else where.replace("_", " ").capitalize()
                problem(index, where, f"{label}: template error: {error.message or error}.")
    return problems


def _input_problems(step: SkillStep, model: type[BaseModel]) -> list[tuple[str, str]]:
    declared = model.model_fields
    accepted = ", ".join(declared) or "no inputs"
    skill = skill_name(step.skill)  # as people read it
    problems = [
        (name, f"{skill} has no input {name!r} (it accepts: {accepted}).")
        for name in step.inputs
        if name not in declared
    ]
    problems += [
        (name, f"{skill} needs the input {name!r}.")
        for name, info in declared.items()
        if info.is_required() and not step.inputs.get(name, "").strip()
    ]
    return problems
