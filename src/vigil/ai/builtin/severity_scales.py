"""The vendor's own severity, read on the scale each alert format uses (docs/analyst.md, "Vendor severity").

A vendor's rating is a floor: only cited evidence that explains the alert may lower it. Reading it wrongly is
dangerous both ways — CrowdStrike's `Severity` 5 is its highest, GuardDuty's 5 is medium, and an Okta System
Log `severity` of WARN is a log level, not a threat rating — so each format names its fields and its scale.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vigil.ai.builtin.document import Field, first
from vigil.ai.schemas import Severity

#: Words vendors rate with (lower-cased, non-letters removed).
WORDS: dict[str, Severity] = {
    "critical": Severity.CRITICAL,
    "high": Severity.HIGH,
    "severe": Severity.HIGH,
    "malicious": Severity.HIGH,
    "medium": Severity.MEDIUM,
    "moderate": Severity.MEDIUM,
    "suspicious": Severity.MEDIUM,
    "low": Severity.LOW,
    "informational": Severity.INFORMATIONAL,
    "info": Severity.INFORMATIONAL,
    "unknown": Severity.INFORMATIONAL,
}

Scale = Callable[[float], Severity]


def _bands(*bounds: tuple[float, Severity]) -> Scale:
    """A numeric scale as (lowest value, severity) bands, highest first."""

    def level(number: float) -> Severity:
        return next((severity for bound, severity in bounds if number >= bound), Severity.INFORMATIONAL)

    return level


#: GuardDuty: Low 1.0-3.9, Medium 4.0-6.9, High 7.0-8.9, Critical 9.0-10.0.
GUARDDUTY = _bands((9.0, Severity.CRITICAL), (7.0, Severity.HIGH), (4.0, Severity.MEDIUM), (1.0, Severity.LOW))
#: CrowdStrike Falcon detections: 1 Informational … 5 Critical.
FALCON_1_5 = _bands((5, Severity.CRITICAL), (4, Severity.HIGH), (3, Severity.MEDIUM), (2, Severity.LOW))
#: CrowdStrike Falcon alerts API and other 0-100 scores: 80+ critical, 60+ high, 40+ medium, 20+ low.
SCORE_0_100 = _bands((80, Severity.CRITICAL), (60, Severity.HIGH), (40, Severity.MEDIUM), (20, Severity.LOW))


@dataclass(frozen=True)
class Format:
    """Where one alert format puts its rating: word fields first (they are unambiguous), then numeric ones."""

    words: tuple[str, ...]
    numbers: tuple[str, ...] = ()
    scale: Scale = GUARDDUTY


#: Generic: the common field names, numbers on a 0-10 scale.
GENERIC = Format(
    words=("severity", "severityName", "severityLevel", "alertSeverity", "severity_name"),
    numbers=("severity", "severityScore"),
    scale=GUARDDUTY,
)
FORMATS: dict[str, Format] = {
    "crowdstrike": Format(
        words=("SeverityName", "severity_name", "severityName"),
        numbers=("Severity", "severity"),
        scale=lambda number: FALCON_1_5(number) if number <= 5 else SCORE_0_100(number),
    ),
    "sentinelone": Format(words=("confidenceLevel", "severity")),
    "aws": Format(words=(), numbers=("Severity", "severity"), scale=GUARDDUTY),
    # Okta's System Log `severity` (DEBUG/INFO/WARN/ERROR) is a log level: Okta rates no threat there.
    "okta": Format(words=()),
    "google_workspace": Format(words=("severity",)),
}


@dataclass(frozen=True)
class VendorRating:
    severity: Severity
    field: Field


def vendor_rating(provider: str, fields: Sequence[Field]) -> VendorRating | None:
    """The vendor's rating of this alert on its own scale, with the field it was read from."""
    fmt = FORMATS.get(provider.strip().lower(), GENERIC)
    word_field = first(fields, *fmt.words) if fmt.words else None
    if word_field is not None:
        severity = WORDS.get(re.sub(r"[^a-z]", "", word_field.value.lower()))
        if severity is not None:
            return VendorRating(severity, word_field)
    number_field = first(fields, *fmt.numbers) if fmt.numbers else None
    if number_field is not None:
        try:
            number = float(number_field.value.strip()[:12])
        except ValueError:
            return None
        return VendorRating(fmt.scale(number), number_field)
    return None
