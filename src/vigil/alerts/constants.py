"""Finite sets of the alerts domain."""

from __future__ import annotations

from enum import IntEnum


class InvestigationStatus(IntEnum):
    """The seed's investigation_status values; the integers are part of the public API."""

    CREATED = 0
    SUBMITTED = 5
    IN_PROGRESS = 10
    COMPLETED = 15
    FAILED = 20

    @property
    def label(self) -> str:
        """The Alerts page label (the seed spells InProgress as 'Inprogress')."""
        return {
            InvestigationStatus.CREATED: "Created",
            InvestigationStatus.SUBMITTED: "Submitted",
            InvestigationStatus.IN_PROGRESS: "Inprogress",
            InvestigationStatus.COMPLETED: "Completed",
            InvestigationStatus.FAILED: "Failed",
        }[self]


MAX_ALERT_TYPE_LENGTH = 256
MAX_BATCH_SIZE = 500
MAX_IDEMPOTENCY_KEY_LENGTH = 128
