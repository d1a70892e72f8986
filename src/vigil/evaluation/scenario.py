"""The labelled evaluation set's format (see README.md) as pydantic models, and its loader.

A scenario is one alert, what each connected integration's fake returns while it is investigated, how the
person named in the alert answers a checkpoint, and what a senior SOC analyst concludes.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator

from vigil.integrations.catalog import vendor_modules
from vigil.integrations.fakes import ScenarioFake

#: The labelled set shipped with the package (the project's frozen held-out set stays in ``tests/eval/holdout/``).
SCENARIOS_DIR = Path(__file__).resolve().parent / "scenarios"
HOLDOUT = "holdout"

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

_FILE_NAME = re.compile(r"^(?P<number>\d{2,3})-(?P<slug>[a-z0-9][a-z0-9-]*)$")


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


@functools.cache
def scenario_fakes() -> dict[str, type[ScenarioFake[Any, Any]]]:
    """Each integration's loopback fake by integration id, in the catalog's order: every vendor folder with a
    ``fake.py`` declares its ``SCENARIO_FAKE``, so a scenario may connect exactly those integrations."""
    declared: list[type[ScenarioFake[Any, Any]]] = [module.SCENARIO_FAKE for module in vendor_modules("fake")]
    return {fake.integration_id: fake for fake in declared}


class ScenarioIntegrations(RootModel[dict[str, dict[str, Any]]]):
    """Which integrations the organization has connected, by id (absent = not connected), and what their fakes
    return: each section is checked against its fake's ``data_model`` and kept with the defaults filled in."""

    root: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("root", mode="before")
    @classmethod
    def _sections_of_known_fakes(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        fakes = scenario_fakes()
        checked: dict[str, dict[str, Any]] = {}
        for integration_id, section in value.items():
            if section is None:
                continue
            if integration_id not in fakes:
                raise ValueError(f"no loopback fake for integration {integration_id!r} (there are: {', '.join(fakes)})")
            checked[integration_id] = fakes[integration_id].data_model.model_validate(section).model_dump(mode="json")
        return checked

    def connected(self) -> list[str]:
        """The connected integrations' ids, in the catalog's order."""
        return [integration_id for integration_id in scenario_fakes() if integration_id in self.root]

    def section(self, integration_id: str) -> dict[str, Any] | None:
        return self.root.get(integration_id)


class Checkpoint(_Strict):
    """How the person asked in chat answers; ``None`` means nobody answers (the checkpoint times out)."""

    answer: Answer | None = None
    person: str | None = None
    """The e-mail of the person the question must go to (the one the alert is about): asking anyone else fails, and
    so does asking nobody when ``answer`` is scripted (the expected verdict rests on it)."""


FactKind = Literal[
    "authorised_scanner",
    "vpn_egress",
    "office_network",
    "ci_network",
    "approved_tool",
    "change_window",
    "vip_account",
    "service_account",
]


class ScenarioFact(_Strict):
    """An organization fact recorded (through the API) before the scenario's alert arrives."""

    kind: FactKind
    value: str = Field(min_length=1)
    """An IP or CIDR (network kinds), a tool or executable name, a change reference, or an account."""
    scope: str | None = None
    reason: str = Field(min_length=1)
    owner: str = Field(min_length=3)
    expires_in_days: int = Field(default=90, ge=-365, le=730)
    """Relative to the run, so a scenario never goes stale; negative: a fact that has already expired."""
    window_start: str | None = None
    """Change windows: ISO 8601 start and end, compared with the alert's own event times."""
    window_end: str | None = None


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
    organization_facts: list[ScenarioFact] = Field(default_factory=list)
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


def scenario_order(path: Path) -> tuple[int, str]:
    """Files in the order of their numbers (``9-`` … ``99-`` … ``104-``), then by name."""
    number = path.name.split("-", 1)[0]
    return (int(number) if number.isdigit() else 10**6, path.name)


def load_scenarios(directory: Path | None = None, *, fast_only: bool = False) -> list[Scenario]:
    """Every ``scenarios/NN-slug.json`` (sorted by file name), validated; ``fast_only`` keeps the CI subset.

    A file whose name is not ``NN-<id>.json`` for the scenario's own id is an error, so ids stay unique.
    """
    folder = directory if directory is not None else SCENARIOS_DIR
    scenarios: list[Scenario] = []
    for path in sorted(folder.glob("*.json"), key=scenario_order):
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
