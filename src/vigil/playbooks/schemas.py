"""Playbook step shapes: stored as JSON data, validated at every edge (AI draft, editor, engine)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from vigil.input_types import MAX_CHECKPOINT_TIMEOUT_SECONDS, MIN_CHECKPOINT_TIMEOUT_SECONDS, Text
from vigil.integrations.catalog import SkillRef


class OnError(StrEnum):
    CONTINUE = "continue"
    FAIL = "fail"


class _Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text = Field(min_length=1, max_length=200, description="Human label shown in the console.")


class SkillStep(_Step):
    """Run one integration skill; inputs are Jinja templates over `alert` and `entities`."""

    kind: Literal["skill"] = "skill"
    skill: SkillRef = Field(
        min_length=1,
        description="Skill id from the catalog (`GET /serviceapi/integrations`), `<integration>.<snake_name>`. "
        "A skill's display name "
        "(its id before ids were namespaced, e.g. 'List Machines') is accepted and stored as the id.",
    )
    connection: Text | None = Field(
        default=None, description="Connection instance name; null means any connected instance."
    )
    inputs: dict[Text, Text] = Field(
        default_factory=dict, description="Input name → template, e.g. '{{ entities.ips[0] }}'."
    )
    on_error: OnError = OnError.CONTINUE


class CheckpointStep(_Step):
    """Ask a person in chat to confirm activity; the workflow waits durably for the answer."""

    kind: Literal["checkpoint"] = "checkpoint"
    user_email: Text = Field(min_length=1, description="Template resolving to the email of the person to ask in chat.")
    question: Text = Field(min_length=1, max_length=2000)
    timeout_seconds: int | None = Field(
        default=None,
        ge=MIN_CHECKPOINT_TIMEOUT_SECONDS,
        le=MAX_CHECKPOINT_TIMEOUT_SECONDS,
        description="How long the playbook waits for the answer; null means the default (the organization's "
        "override, else the service-wide setting).",
    )


class AnalyzeStep(_Step):
    """The AI verdict over all evidence gathered so far."""

    kind: Literal["analyze"] = "analyze"


PlaybookStep = Annotated[SkillStep | CheckpointStep | AnalyzeStep, Field(discriminator="kind")]


class PlaybookDefinition(BaseModel):
    """The versioned body of an investigator playbook."""

    model_config = ConfigDict(extra="forbid")

    steps: list[PlaybookStep] = Field(min_length=1, max_length=50)
