"""Rendering playbook step inputs: sandboxed Jinja over the alert and its entities.

Playbooks are edited by analysts, so templates run in Jinja's sandbox and can reach only the
context given here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jinja2 import TemplateError
from jinja2.sandbox import SandboxedEnvironment

_ENV = SandboxedEnvironment(autoescape=False, keep_trailing_newline=False)


class TemplateRenderError(Exception):
    """A step input template is malformed or failed while rendering."""


def render_inputs(templates: Mapping[str, str], context: Mapping[str, Any]) -> dict[str, str]:
    rendered: dict[str, str] = {}
    for name, template in templates.items():
        try:
            rendered[name] = _ENV.from_string(template).render(**context).strip()
        except TemplateError as error:
            raise TemplateRenderError(f"input {name!r}: {error}") from error
    return rendered
