"""A case's AI trail: every model request and tool call of the investigations behind it, with the totals.

Here, not in `cases/`, because the exchanges are the investigations' record: cases sit below investigations
(docs/architecture.md), and the case page reads its AI trail from the layer that wrote it.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from vigil.ai.transcript import Exchange, ExchangeTotals
from vigil.cases.models import Case
from vigil.cases.schemas import AiExchangeOut, AiTotalsOut, AiTrailOut
from vigil.investigations import service as investigations_service


def case_exchanges(session: Session, case: Case) -> list[Exchange]:
    """Every attempt's exchanges for the case's alert, in call order: a re-run's calls cost tokens too."""
    return investigations_service.exchanges_of(session, case.alert_uuid)


def ai_trail(exchanges: list[Exchange]) -> AiTrailOut:
    return AiTrailOut(
        totals=AiTotalsOut.model_validate(ExchangeTotals.of(exchanges)),
        exchanges=[AiExchangeOut.model_validate(exchange) for exchange in exchanges],
    )


def case_ai_trail(session: Session, case: Case) -> AiTrailOut:
    return ai_trail(case_exchanges(session, case))
