"""The labelled evaluation set's format (see README.md) as pydantic models, and its loader.

A scenario is one alert, what each connected integration's fake returns while it is investigated, how the
person named in the alert answers a checkpoint, and what a senior SOC analyst concludes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCENARIOS_DIR = Path(__file__).resolve().parent / "scenarios"

Category = Literal[
    "identity",
    "endpoint",
    "phishing",
    "cloud_credentials",
    "edge_waf",
    "saas_accounts",
    "data_theft",
    "insider",
]
Disposition = Literal["true_positive", "benign_true_positive", "false_positive", "pending"]
Severity = Literal["informational", "low", "medium", "high", "critical"]
Answer = Literal["confirmed", "denied"]

CATEGORIES: tuple[Category, ...] = get_args(Category)
DISPOSITIONS: tuple[Disposition, ...] = get_args(Disposition)
SEVERITIES: tuple[Severity, ...] = ("informational", "low", "medium", "high", "critical")

_FILE_NAME = re.compile(r"^(?P<number>\d{2})-(?P<slug>[a-z0-9][a-z0-9-]*)$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ScenarioAlert(_Strict):
    """An alert as it is posted to ``POST /serviceapi/alerts`` (the organization is the runner's)."""

    alert_provider: str
    alert_type: str
    alert_content: dict[str, Any] | str

    def content_text(self) -> str:
        """The exact ``alert_content`` string to send: JSON text for an object, the string itself otherwise."""
        if isinstance(self.alert_content, str):
            return self.alert_content
        return json.dumps(self.alert_content)


class HuntingEntry(_Strict):
    """Rows the Defender fake returns for an advanced-hunting query whose KQL contains ``query_contains``."""

    query_contains: str = Field(min_length=1)
    rows: list[dict[str, Any]] = Field(default_factory=list)


class DefenderData(_Strict):
    machines: list[dict[str, Any]] = Field(default_factory=list)
    alerts: list[dict[str, Any]] = Field(default_factory=list)
    hunting: list[HuntingEntry] = Field(default_factory=list)


class CloudflareData(_Strict):
    audit_logs: list[dict[str, Any]] = Field(default_factory=list)
    insights: list[dict[str, Any]] = Field(default_factory=list)


class PushSecurityData(_Strict):
    accounts: list[dict[str, Any]] = Field(default_factory=list)
    findings: list[dict[str, Any]] = Field(default_factory=list)
    detections: list[dict[str, Any]] = Field(default_factory=list)


class SlackData(_Strict):
    """Connected; every e-mail address resolves to a Slack user."""


class ScenarioIntegrations(_Strict):
    """Which integrations the organization has connected (absent = not connected) and what their fakes return."""

    microsoft_defender: DefenderData | None = None
    cloudflare: CloudflareData | None = None
    push_security: PushSecurityData | None = None
    slack: SlackData | None = None

    def connected(self) -> list[str]:
        return [name for name in type(self).model_fields if getattr(self, name) is not None]


class Checkpoint(_Strict):
    """How the person asked in chat answers; ``None`` means nobody answers (the checkpoint times out)."""

    answer: Answer | None = None


class Expected(_Strict):
    disposition: Disposition
    severity: list[Severity] = Field(min_length=1)
    entities: list[str] = Field(min_length=1)
    rationale: str = Field(min_length=1)


class Scenario(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    category: Category
    fast: bool = False
    alert: ScenarioAlert
    history: list[ScenarioAlert] = Field(default_factory=list)
    integrations: ScenarioIntegrations = Field(default_factory=ScenarioIntegrations)
    checkpoint: Checkpoint | None = None
    injection_text: str | None = None
    expected: Expected

    @field_validator("injection_text")
    @classmethod
    def _injection_not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("injection_text must not be blank")
        return value

    def content_text(self) -> str:
        """The exact text sent as the alert's ``alert_content``."""
        return self.alert.content_text()

    def with_injection_replaced(self, replacement: str) -> Scenario:
        """The control run: a copy with ``replacement`` wherever ``injection_text`` was, in the alert, the history
        and every integration's fake data (the same attacker text also shows up in hunting rows and audit logs)."""
        if self.injection_text is None:
            return self
        data = self.model_dump(mode="json", exclude={"injection_text"})
        for key in ("alert", "history", "integrations"):
            data[key] = _replace_text(data[key], self.injection_text, replacement)
        return Scenario.model_validate(data)


def _replace_text(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {key: _replace_text(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace_text(item, old, new) for item in value]
    return value


def load_scenarios(directory: Path | None = None, *, fast_only: bool = False) -> list[Scenario]:
    """Every ``scenarios/NN-slug.json`` (sorted by file name), validated; ``fast_only`` keeps the CI subset.

    A file whose name is not ``NN-<id>.json`` for the scenario's own id is an error, so ids stay unique.
    """
    folder = directory if directory is not None else SCENARIOS_DIR
    scenarios: list[Scenario] = []
    for path in sorted(folder.glob("*.json"), key=lambda p: p.name):
        match = _FILE_NAME.match(path.stem)
        if match is None:
            raise ValueError(f"{path.name}: scenario files are named NN-<id>.json")
        try:
            scenario = Scenario.model_validate_json(path.read_text(encoding="utf-8"))
        except ValueError as error:
            raise ValueError(f"{path.name}: {error}") from error
        if scenario.id != match["slug"]:
            raise ValueError(f"{path.name}: id {scenario.id!r} does not match the file name")
        if not fast_only or scenario.fast:
            scenarios.append(scenario)
    return scenarios
