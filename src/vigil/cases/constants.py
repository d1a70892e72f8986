"""Finite sets of the cases domain. Severity and disposition are the AI's vocabulary, shared on purpose."""

from enum import StrEnum

from vigil.ai.schemas import Disposition as CaseDisposition
from vigil.ai.schemas import Severity as CaseSeverity

__all__ = ["NEXT_STATUSES", "CaseDisposition", "CaseSeverity", "CaseStatus"]


class CaseStatus(StrEnum):
    NEW = "new"
    IN_PROGRESS = "in_progress"
    PENDING = "pending"
    WAITING_FOR_CUSTOMER = "waiting_for_customer"
    CONTAINED = "contained"
    CLOSED = "closed"


_OPEN = (
    CaseStatus.IN_PROGRESS,
    CaseStatus.PENDING,
    CaseStatus.WAITING_FOR_CUSTOMER,
    CaseStatus.CONTAINED,
)
#: The case lifecycle: where a case may go from each status. `new` is only where a case starts (once someone
#: works it, it never becomes new again); any open status may move to another or close; a closed case only
#: reopens, to in progress. Closing also needs a disposition other than pending (the service checks both).
NEXT_STATUSES: dict[CaseStatus, tuple[CaseStatus, ...]] = {
    CaseStatus.NEW: (*_OPEN, CaseStatus.CLOSED),
    **{status: (*(s for s in _OPEN if s is not status), CaseStatus.CLOSED) for status in _OPEN},
    CaseStatus.CLOSED: (CaseStatus.IN_PROGRESS,),
}
