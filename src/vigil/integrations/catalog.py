"""The catalog of every integration and skill Vigil ships, and its JSON form for the console and the LLM tools."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
from types import ModuleType
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

import vigil.integrations
from vigil.evidence.facts import ORG_FACTS_SKILL_ID
from vigil.input_types import Text
from vigil.integrations.errors import UnknownIntegrationError, UnknownSkillError
from vigil.integrations.framework import ConnectionField, Integration, Skill, registered_skills

if TYPE_CHECKING:
    from vigil.integrations.chat import ChatProvider


def _vendor_packages() -> list[ModuleType]:
    """Every folder under `integrations/` that declares an `INTEGRATION`: adding a vendor is adding its folder."""
    found = []
    for module in pkgutil.iter_modules(vigil.integrations.__path__, f"{vigil.integrations.__name__}."):
        if module.ispkg:
            package = importlib.import_module(module.name)
            if isinstance(getattr(package, "INTEGRATION", None), Integration):
                found.append(package)
    return sorted(found, key=lambda package: (package.INTEGRATION.position, package.INTEGRATION.name))


_VENDOR_PACKAGES = _vendor_packages()
_INTEGRATIONS: list[Integration] = [package.INTEGRATION for package in _VENDOR_PACKAGES]


def vendor_modules(name: str) -> list[ModuleType]:
    """Each vendor folder's module `name` where it has one: its inbound `webhooks` (mounted by the app), its
    `models` (so the tables a vendor keeps join the schema)."""
    return [
        importlib.import_module(f"{package.__name__}.{name}")
        for package in _VENDOR_PACKAGES
        if importlib.util.find_spec(f"{package.__name__}.{name}") is not None
    ]


#: Namespace of the skills Vigil runs itself against its own data (no connection; the engine implements them).
VIGIL_INTEGRATION_ID = "vigil"
RELATED_SKILL_ID = "vigil.related_alerts"
#: Vigil's own skills: id → display name.
VIGIL_SKILL_NAMES: dict[str, str] = {
    RELATED_SKILL_ID: "Look up related alerts",
    ORG_FACTS_SKILL_ID: "Organization facts",  # run by the engine before every analysis, never a playbook step
}


def all_integrations() -> list[Integration]:
    return list(_INTEGRATIONS)


def add_integration(integration: Integration) -> None:
    """Declare one more integration at run time (a plugin; the tests' second chat provider)."""
    if any(known.id == integration.id for known in _INTEGRATIONS):
        raise ValueError(f"duplicate integration id {integration.id!r}")
    _INTEGRATIONS.append(integration)
    catalog_json.cache_clear()


def remove_integration(integration_id: str) -> None:
    _INTEGRATIONS[:] = [known for known in _INTEGRATIONS if known.id != integration_id]
    catalog_json.cache_clear()


def chat_integration_ids() -> frozenset[str]:
    """The integrations that can ask people questions: the engine looks a chat connection up by these."""
    return frozenset(integration.id for integration in _INTEGRATIONS if integration.chat is not None)


def chat_provider(integration_id: str) -> ChatProvider:
    provider = get_integration(integration_id).chat
    if provider is None:
        raise UnknownIntegrationError(integration_id)
    return provider


def get_integration(integration_id: str) -> Integration:
    for integration in _INTEGRATIONS:
        if integration.id == integration_id:
            return integration
    raise UnknownIntegrationError(integration_id)


def all_skills() -> list[Skill]:
    return registered_skills()


def skill_names() -> dict[str, str]:
    """Every skill a playbook step may name, Vigil's own and the declared ones: id → display name."""
    names = dict(VIGIL_SKILL_NAMES)
    names.update((declared.id, declared.name) for declared in registered_skills())
    return names


def canonical_skill_id(ref: str) -> str:
    """The id of the skill `ref` names, by its id or by its display name (which was its id before ids were
    namespaced, so stored playbooks and API clients may still send it; the first skill declaring a name wins).
    Anything else comes back unchanged, for the caller to refuse as unknown."""
    names = skill_names()
    if ref in names:
        return ref
    return next((skill_id for skill_id, name in names.items() if name == ref), ref)


#: A skill named in data (a playbook step, evidence): stored and compared as its canonical id, whichever way it
#: was written.
SkillRef = Annotated[Text, AfterValidator(canonical_skill_id)]


def skill_name(skill_id: str) -> str:
    """What people read for a skill id (legacy names included); an unknown id is shown as it is."""
    return skill_names().get(canonical_skill_id(skill_id), skill_id)


def get_skill(ref: str) -> Skill:
    """A declared skill by its id or its legacy display name."""
    skill_id = canonical_skill_id(ref)
    for declared in registered_skills():
        if declared.id == skill_id:
            return declared
    raise UnknownSkillError(ref)


def field_json(f: ConnectionField) -> dict[str, Any]:
    return {
        "name": f.name,
        "label": f.label,
        "type": f.type,
        "secret": f.secret,
        "required": f.required,
        "help": f.help,
        "auth_methods": list(f.auth_methods),
        "choices": list(f.choices),
        "default": f.default,
    }


def skill_json(s: Skill) -> dict[str, Any]:
    return {
        "id": s.id,
        "name": s.name,
        "integration_id": s.integration_id,
        "purpose": s.purpose,
        "permissions": list(s.permissions),
        "writes": s.writes,
        "input_schema": s.input_model.model_json_schema(),
        "output_schema": s.output_model.model_json_schema(mode="serialization"),
    }


@functools.cache
def catalog_json() -> list[dict[str, Any]]:
    """Everything the console's Integrations and Skills tabs show, derived from the declarations.

    Built once per process: the declarations are fixed at import, and building every JSON schema
    costs tens of milliseconds.
    """
    return [
        {
            "id": integration.id,
            "name": integration.name,
            "description": integration.description,
            "auth_method_field": integration.auth_method_field,
            "base_urls": {url.key: url.default for url in integration.base_urls},
            "fields": [field_json(f) for f in integration.fields],
            "skills": [skill_json(s) for s in integration.skills],
        }
        for integration in _INTEGRATIONS
    ]
