"""Request and response shapes for organizations and providers (E2, E3), and an organization's own AI model."""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from vigil.input_types import Text

ORGANIZATION_CODE_PATTERN = r"^[A-Z0-9]{2,16}$"
PROVIDER_SLUG_PATTERN = r"^[a-z][a-z0-9_]{1,63}$"
MAX_NAME_LENGTH = 200
MAX_AI_MODEL_LENGTH = 200  # organizations.ai_model
MAX_AI_BASE_URL_LENGTH = 500  # organizations.ai_base_url
MAX_AI_API_KEY_LENGTH = 4096


class OrganizationOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    organization_code: str
    organization_uuid: uuid.UUID
    name: str


class OrganizationList(BaseModel):
    organizations: list[OrganizationOut]


class OrganizationDetail(OrganizationOut):
    """One organization with the model that investigates its alerts; the model's key is never shown."""

    ai_model: str | None = Field(description="This organization's own model; null: the service's VIGIL_AI_MODEL.")
    ai_base_url: str | None = Field(description="Where its own model is reached (an OpenAI-compatible server).")
    ai_api_key_set: bool = Field(description="Whether a key for its own model is stored (the key is write-only).")
    effective_ai_model: str = Field(description="The model its next investigation uses: its own, else VIGIL_AI_MODEL.")


class OrganizationAiModelUpdate(BaseModel):
    """PUT: the organization's own model, base URL and key; `ai_model: null` goes back to `VIGIL_AI_MODEL`."""

    model_config = ConfigDict(extra="forbid")

    ai_model: Text | None = Field(
        max_length=MAX_AI_MODEL_LENGTH,
        description="`builtin` or a pydantic-ai model string (`openai:<model>`, `openai-chat:<model>`, "
        "`anthropic:<model>`); null removes the organization's own model, base URL and key.",
    )
    ai_base_url: Text | None = Field(
        default=None,
        max_length=MAX_AI_BASE_URL_LENGTH,
        description="http(s) URL of an OpenAI-compatible (or Anthropic) server, e.g. http://gpu:8000/v1; "
        "null: the provider's own.",
    )
    ai_api_key: SecretStr | None = Field(
        default=None,
        max_length=MAX_AI_API_KEY_LENGTH,
        description="Write-only. Omitted or null: keep the stored key while the provider and base URL stay the same; "
        '"": remove it.',
    )


class ProviderOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    alert_provider: str
    name: str


class ProviderList(BaseModel):
    providers: list[ProviderOut]


class OrganizationSummary(BaseModel):
    """One row of the console's organizations list, with cheap activity counts."""

    organization_uuid: uuid.UUID
    organization_code: str
    name: str
    created_at: int
    modified_at: int
    alerts: int
    cases: int
    connections: int
