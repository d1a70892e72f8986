"""What every analyst rule produces: signed points, the sentence an analyst reads, and the evidence it cites."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from vigil.ai.schemas import AlertFacts, Citation, Evidence
from vigil.core.entities import Entities

#: Quotes in citations are cut to this many characters (a command line can be kilobytes).
QUOTE_CHARS = 300
ALERT_SOURCE = "alert"


class Explains(StrEnum):
    """A signal that explains the alert away, and how: decides between the two benign dispositions."""

    AUTHORISED = "authorised"  # the activity happened and a person or the evidence says it was allowed
    WRONG_DETECTION = "wrong_detection"  # the detection fired on something that is not what it claims


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
        item: Evidence,
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

    def citation(self) -> Citation:
        return Citation(
            rule=self.rule,
            source=self.source,
            skill_id=self.skill_id,
            locator=self.locator,
            quote=shorten(self.quote),
            finding=self.finding,
            points=self.points,
        )


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line, at most `limit` characters, so a quote stays readable in a summary and a table cell."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


#: A rule over one successful skill step's output.
SkillRule = Callable[[Evidence, AlertFacts, Entities], list[Signal]]
