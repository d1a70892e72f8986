"""What every reader of evidence produces: signed points, the sentence an analyst reads, and what it cites.

Readers live in `ai/builtin/rules/` (the alert itself, Vigil's own lookups) and in the vendor folders (what a
vendor's skill returned); they see a step and an alert through the two small protocols below, so a vendor
folder depends on this vocabulary only, never on the investigator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from vigil.core.entities import Entities

ALERT_SOURCE = "alert"


class Explains(StrEnum):
    """A signal that explains the alert away, and how: decides between the two benign dispositions."""

    AUTHORISED = "authorised"  # the activity happened and a person or the evidence says it was allowed
    WRONG_DETECTION = "wrong_detection"  # the detection fired on something that is not what it claims


class StepOutput(Protocol):
    """One executed playbook step as a reader sees it."""

    @property
    def step_name(self) -> str: ...

    @property
    def skill_id(self) -> str | None: ...

    @property
    def output(self) -> Mapping[str, Any] | None: ...


class AlertText(Protocol):
    """The alert as a reader sees it: its type and its body exactly as received."""

    @property
    def alert_type(self) -> str: ...

    @property
    def alert_content(self) -> str: ...


@dataclass(frozen=True)
class Signal:
    """Points for (positive) or against (negative) maliciousness, with the evidence that justifies them."""

    rule: str
    points: float
    finding: str
    source: str = ALERT_SOURCE
    skill_id: str | None = None
    locator: str = ""
    quote: str = ""
    explains: Explains | None = None
    entities: tuple[str, ...] = ()
    #: Scales severity instead of the verdict (a high-value machine, an admin account).
    asset_value: bool = False

    @classmethod
    def from_step(
        cls,
        item: StepOutput,
        rule: str,
        points: float,
        finding: str,
        locator: str,
        quote: str,
        *,
        explains: Explains | None = None,
        entities: tuple[str, ...] = (),
        asset_value: bool = False,
    ) -> Signal:
        """A signal read from one playbook step's output, cited by the step's name and skill."""
        return cls(
            rule=rule,
            points=points,
            finding=finding,
            source=item.step_name,
            skill_id=item.skill_id,
            locator=locator,
            quote=quote,
            explains=explains,
            entities=entities,
            asset_value=asset_value,
        )


#: A reader of one successful skill step's output.
SkillReader = Callable[[StepOutput, AlertText, Entities], list[Signal]]
#: A reader of the alert's body, given parsed (JSON, or None when it is not JSON): what a vendor's own alert
#: format says beyond the fields every alert is read for.
AlertReader = Callable[[AlertText, object], list[Signal]]
