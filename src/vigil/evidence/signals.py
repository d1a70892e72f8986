"""What every reader of evidence produces: signed points, the sentence an analyst reads, and what it cites.

Readers live in `ai/builtin/rules/` (the alert itself, Vigil's own lookups) and in the vendor folders (what a
vendor's skill returned); they see the alert and a step as the types below, so a vendor folder depends on this
vocabulary only, never on the investigator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from vigil.core.entities import Entities

ALERT_SOURCE = "alert"


class Explains(StrEnum):
    """A signal that explains the alert away, and how: decides between the two benign dispositions."""

    AUTHORISED = "authorised"  # the activity happened and a person or the evidence says it was allowed
    WRONG_DETECTION = "wrong_detection"  # the detection fired on something that is not what it claims


class AlertFacts(BaseModel):
    """The alert as the investigator sees it: identity, source and the body exactly as received."""

    model_config = ConfigDict(frozen=True)

    organization_code: str
    alert_provider: str
    alert_type: str
    alert_content: str
    alert_id: str


@dataclass(frozen=True)
class StepOutput:
    """One executed playbook step as a reader sees it: the name a citation gives as its source, the skill it
    ran, and what that skill returned."""

    step_name: str
    skill_id: str | None
    output: Mapping[str, Any] | None


@dataclass(frozen=True)
class Signal:
    """Points for (positive) or against (negative) maliciousness, with the evidence that justifies them: where
    it was read (the alert or a step, a locator, a quote), and whether it explains the alert away."""

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
    #: The vendor's own rating of the alert ("high"), a floor only explaining evidence may lower.
    vendor_severity: str | None = None
    #: ATT&CK techniques (``T1105``) and tactics (``command-and-control``) the evidence shows, e.g. a Sigma
    #: rule's tags: distinct tactics across the evidence add up to risk.
    techniques: tuple[str, ...] = ()
    tactics: tuple[str, ...] = ()

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
        source, skill_id = item.step_name, item.skill_id
        return cls(rule, points, finding, source, skill_id, locator, quote, explains, entities, asset_value)


#: A reader of one successful skill step's output.
SkillReader = Callable[[StepOutput, AlertFacts, Entities], list[Signal]]
#: A reader of the alert's body, given parsed (JSON, or None when it is not JSON): what a vendor's own alert
#: format says beyond the fields every alert is read for.
AlertReader = Callable[[AlertFacts, object], list[Signal]]
