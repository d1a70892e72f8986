"""Finite sets of the cases domain. Severity and disposition are the AI's vocabulary, shared on purpose."""

from enum import StrEnum

from vigil.ai.schemas import Disposition as CaseDisposition
from vigil.ai.schemas import Severity as CaseSeverity

__all__ = ["CaseDisposition", "CaseSeverity", "CaseStatus"]


class CaseStatus(StrEnum):
    NEW = "new"
    IN_PROGRESS = "in_progress"
    PENDING = "pending"
    WAITING_FOR_CUSTOMER = "waiting_for_customer"
    CONTAINED = "contained"
    CLOSED = "closed"
