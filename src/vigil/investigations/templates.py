"""Rendering playbook step inputs: sandboxed Jinja over the alert and its entities.

Playbooks are edited by analysts, so templates run in Jinja's sandbox and can reach only the
context given here.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from jinja2 import Template, TemplateError
from jinja2.sandbox import SandboxedEnvironment

_ENV = SandboxedEnvironment(autoescape=False, keep_trailing_newline=False)
#: Distinct input templates a process keeps compiled: every playbook's inputs, with room to spare.
COMPILED_TEMPLATES = 2048


class TemplateRenderError(Exception):
    """A step input template is malformed or failed while rendering."""


def render_inputs(templates: Mapping[str, str], context: Mapping[str, Any]) -> dict[str, str]:
    rendered: dict[str, str] = {}
    for name, template in templates.items():
        try:
            rendered[name] = _compiled(template).render(**context).strip()
        except TemplateError as error:
            raise TemplateRenderError(f"input {name!r}: {error}") from error
    return rendered


@functools.lru_cache(maxsize=COMPILED_TEMPLATES)
def _compiled(template: str) -> Template:
    """Compiling is most of a render's cost and every alert of a type renders the same few templates; a compiled
    template is immutable and safe to render from many threads at once. A syntax error is raised, never cached."""
    return _ENV.from_string(template)
