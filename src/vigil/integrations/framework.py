"""Declarations every integration is built from: connection fields, skills (typed async functions registered by
a decorator), the integration itself and the connection-test result.

The console's forms, the Skills tab, the LLM tool schema and input validation all derive from these, so a new
skill is one decorated function in its vendor folder.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_type_hints

from pydantic import AliasGenerator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from vigil.input_types import has_control_characters
from vigil.integrations.errors import IntegrationError, UnknownIntegrationError, UnknownSkillError
from vigil.integrations.skill_base import Endpoints, SkillContext, SkillInput, SkillOutput, VendorUrl, optional

if TYPE_CHECKING:
    import uuid

    from sqlalchemy.orm import Session

    from vigil.auth.schemas import Principal
    from vigil.integrations.chat import ChatProvider

__all__ = [
    "ConnectionField",
    "ConnectionSetup",
    "ConnectionTestResult",
    "Endpoints",
    "FieldType",
    "Integration",
    "IntegrationError",
    "SetupDocument",
    "SetupGuide",
    "SetupValue",
    "Skill",
    "SkillContext",
    "SkillInput",
    "SkillOutput",
    "UnknownIntegrationError",
    "UnknownSkillError",
    "VendorRecord",
    "VendorStrEnum",
    "VendorUrl",
    "optional",
    "registered_skills",
    "skill",
]

FieldType = Literal["text", "secret", "url", "host", "email"]
"""``url`` and ``host`` fields name where credentials are sent: they pass the outbound-URL policy, and changing one
requires re-entering the connection's secrets. A ``host`` is a bare host name (``https://`` is implied) or a URL."""
DESTINATION_TYPES = frozenset({"url", "host"})
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


@dataclass(frozen=True)
class ConnectionField:
    """One value a connection stores. ``auth_methods`` empty means the field applies to every auth method."""

    name: str
    label: str
    type: FieldType
    help: str
    secret: bool = False
    required: bool = True
    auth_methods: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    default: str | None = None
    pattern: str | None = None
    """Regular expression a non-empty value must match (e.g. a bot token's documented prefix)."""

    @property
    def is_destination(self) -> bool:
        """Whether the value says where requests (and so credentials) go."""
        return self.type in DESTINATION_TYPES

    def destination_url(self, value: str) -> str:
        """The URL a destination value stands for (a bare host means ``https://host``)."""
        text = value.strip()
        return text if "://" in text else f"https://{text}"

    def applies_to(self, auth_method: str | None) -> bool:
        return not self.auth_methods or auth_method is None or auth_method in self.auth_methods

    def problem(self, value: str | None) -> str | None:
        """Why ``value`` is unacceptable for this field, or None. Never echoes the value (it may be a secret)."""
        if value is None or not value.strip():
            return f"{self.label} is required." if self.required and self.default is None else None
        text = value.strip()
        if has_control_characters(text):
            return f"{self.label} must not contain control characters."
        if (self.secret or self.type == "email") and not (text.isascii() and text.isprintable()):
            return f"{self.label} must be printable ASCII (credentials travel in HTTP headers)."
        if self.choices and text not in self.choices:
            return f"{self.label} must be one of: {', '.join(self.choices)}."
        if self.type == "url" and not text.startswith(("https://", "http://")):
            return f"{self.label} must be a URL starting with https://."
        if self.type == "host" and any(c.isspace() for c in text):
            return f"{self.label} must be a host name or an https:// URL."
        if self.type == "email" and not _EMAIL.match(text):
            return f"{self.label} must be an email address."
        if self.pattern and not re.match(self.pattern, text):
            return f"{self.label} has the wrong format."
        return None


@dataclass(frozen=True)
class SetupValue:
    """A value the operator pastes into the vendor's product (a request URL); `element_id` names its copy button's
    target on the page."""

    element_id: str
    label: str
    value: str


@dataclass(frozen=True)
class SetupDocument:
    """A document the operator pastes whole (an app manifest), in one format (`JSON`, `YAML`)."""

    element_id: str
    title: str
    format: str
    text: str


@dataclass(frozen=True)
class ConnectionSetup:
    """What an operator does in the vendor's own product to finish a connection, shown on the connection's page."""

    title: str
    steps: tuple[str, ...]
    values: tuple[SetupValue, ...] = ()
    note: str = ""
    documents: tuple[SetupDocument, ...] = ()


#: A connection's setup, from the console's base URL: (session, principal, connection uuid, base URL).
SetupGuide = Callable[["Session", "Principal", "uuid.UUID", str], ConnectionSetup]


class VendorRecord(BaseModel):
    """A record parsed from a vendor's camelCase JSON but exposed to playbooks with snake_case names."""

    model_config = ConfigDict(
        alias_generator=AliasGenerator(validation_alias=to_camel),
        validate_by_name=True,
        validate_by_alias=True,
        extra="ignore",
    )


class VendorStrEnum(StrEnum):
    """Enum of vendor values that also accepts any letter case, since templates and LLMs write "high"."""

    @classmethod
    def _missing_(cls, value: object) -> VendorStrEnum | None:
        if isinstance(value, str):
            for member in cls:
                if member.value.lower() == value.lower():
                    return member
        return None


class ConnectionTestResult(BaseModel):
    """Outcome of Authenticate/Test on a connection, shown to the user as cause + remedy."""

    ok: bool = Field(description="True when the vendor accepted the credentials.")
    status_code: int | None = Field(default=None, description="HTTP status of the failing vendor response.")
    cause: str | None = Field(default=None, description="Why the test failed, in the vendor's terms.")
    remedy: str | None = Field(default=None, description="What the user should do to fix it.")
    detail: str | None = Field(default=None, description="Extra context: account/team on success, vendor message.")


InputT = TypeVar("InputT", bound=BaseModel)
OutputT = TypeVar("OutputT", bound=BaseModel)
SkillFunc = Callable[[SkillContext, Any], Awaitable[BaseModel]]


#: A skill id: ``<namespace>.<snake_name>``, where the namespace is the integration id (``chat`` and ``vigil`` for
#: the capabilities that are not one vendor's). Stable: playbooks, evidence and metrics store it.
SKILL_ID = re.compile(r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")
#: Namespaces of capabilities an integration implements but does not own (the chat checkpoint).
NEUTRAL_NAMESPACES = frozenset({"chat"})


@dataclass(frozen=True)
class Skill:
    """A registered skill: stable namespaced id, display name (as in the seed), purpose, vendor permissions and
    typed input/output."""

    id: str
    name: str
    integration_id: str
    purpose: str
    permissions: tuple[str, ...]
    writes: bool
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    func: SkillFunc


_REGISTRY: dict[str, Skill] = {}


TypedSkillFunc = Callable[[SkillContext, InputT], Awaitable[OutputT]]


def skill(
    *, integration: str, id: str, name: str, purpose: str, permissions: tuple[str, ...], writes: bool
) -> Callable[[TypedSkillFunc[InputT, OutputT]], TypedSkillFunc[InputT, OutputT]]:
    """Register an ``async def f(ctx: SkillContext, params: In) -> Out``; models are read from its annotations.

    ``id`` is ``<integration id>.<snake_name>`` (see ``SKILL_ID``); ``name`` is what people read, and (being the id
    skills had before ids were namespaced) still resolves to the skill."""

    namespace = id.partition(".")[0]
    if not SKILL_ID.match(id) or namespace not in {integration, *NEUTRAL_NAMESPACES}:
        raise ValueError(f"skill id {id!r} must be {integration}.<snake_name>")

    def register(func: TypedSkillFunc[InputT, OutputT]) -> TypedSkillFunc[InputT, OutputT]:
        hints = get_type_hints(func)
        params = [name for name in hints if name != "return"]
        if len(params) != 2:
            raise TypeError(f"skill {id!r} must take (ctx: SkillContext, params: <input model>)")
        input_model, output_model = hints[params[1]], hints["return"]
        for model in (input_model, output_model):
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                raise TypeError(f"skill {id!r}: input and output must be pydantic models")
        if id in _REGISTRY:
            raise ValueError(f"duplicate skill id {id!r}")
        _REGISTRY[id] = Skill(
            id=id,
            name=name,
            integration_id=integration,
            purpose=purpose,
            permissions=permissions,
            writes=writes,
            input_model=input_model,
            output_model=output_model,
            func=func,
        )
        return func

    return register


def registered_skills() -> list[Skill]:
    """Every skill registered so far, in registration order (import the vendor packages first)."""
    return list(_REGISTRY.values())


ConnectionTest = Callable[[SkillContext], Awaitable[ConnectionTestResult]]


@dataclass(frozen=True)
class Integration:
    """A vendor integration: connection fields, how to test a connection, and (from the registry) its skills."""

    id: str
    name: str
    description: str
    fields: tuple[ConnectionField, ...]
    test: ConnectionTest
    auth_method_field: str | None = None
    #: Base URLs of the vendor's API (none when the connection's own fields say where the API is).
    base_urls: tuple[VendorUrl, ...] = ()
    #: Place in the catalog and the console (then by name): the seed's order for the built-in ones.
    position: int = 100
    #: When the vendor is also an alert provider (same id): what its alerts usually are, as the built-in analyst's
    #: category name (`endpoint_malware`, …), a prior for classifying them.
    alert_category: str | None = None
    chat: ChatProvider | None = None
    """Set when the integration can ask people questions (Chat Checkpoints): the engine finds it by this."""
    setup: SetupGuide | None = None
    """Set when a connection needs steps in the vendor's own product (a chat app to create); the console shows them."""

    @property
    def skills(self) -> list[Skill]:
        return [s for s in _REGISTRY.values() if s.integration_id == self.id]

    def auth_method(self, values: Mapping[str, str]) -> str | None:
        """The chosen auth method (or the field's default), for integrations that offer more than one."""
        if self.auth_method_field is None:
            return None
        chooser = next(f for f in self.fields if f.name == self.auth_method_field)
        chosen = (values.get(chooser.name) or "").strip()
        return chosen or chooser.default

    def fields_for(self, auth_method: str | None) -> tuple[ConnectionField, ...]:
        return tuple(f for f in self.fields if f.applies_to(auth_method))

    def validate_values(self, values: Mapping[str, str]) -> dict[str, str]:
        """Problems by field name for the fields the chosen auth method uses; empty when the values are usable."""
        method = self.auth_method(values)
        problems: dict[str, str] = {}
        for f in self.fields_for(method):
            problem = f.problem(values.get(f.name))
            if problem is not None:
                problems[f.name] = problem
        return problems

    def secret_field_names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields if f.secret)
