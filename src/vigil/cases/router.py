"""Case queries (SPEC §3): list with filters and cursor pagination, one case with evidence and timeline."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from vigil.cases import service
from vigil.cases.constants import CaseSeverity, CaseStatus
from vigil.cases.schemas import CaseCommentOut, CaseDetail, CaseEventOut, CaseOut, CasePage, EvidenceOut
from vigil.web.deps import DbDep, PrincipalDep
from vigil.web.openapi import ERROR_RESPONSES

router = APIRouter(prefix="/serviceapi/cases", tags=["cases"], responses=ERROR_RESPONSES)


@router.get("", summary="List cases, newest first")
def list_cases(
    db: DbDep,
    principal: PrincipalDep,
    organization_code: str | None = None,
    status: CaseStatus | None = None,
    severity: CaseSeverity | None = None,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> CasePage:
    with db.read() as session:
        cases, next_cursor = service.list_cases(
            session,
            principal,
            organization_code=organization_code,
            status=status,
            severity=severity,
            cursor=cursor,
            limit=limit,
        )
        return CasePage(cases=[CaseOut.model_validate(c) for c in cases], next_cursor=next_cursor)


@router.get("/{case_ref}", summary="One case by case_id or case_uuid, with evidence, timeline and comments")
def get_case(case_ref: str, db: DbDep, principal: PrincipalDep) -> CaseDetail:
    with db.read() as session:
        case = service.get_case(session, principal, case_ref)
        return CaseDetail(
            **CaseOut.model_validate(case).model_dump(),
            evidence=[EvidenceOut.model_validate(s) for s in service.case_evidence(session, case)],
            timeline=[CaseEventOut.model_validate(e) for e in service.case_timeline(session, case)],
            comments=[CaseCommentOut.model_validate(c) for c in service.case_comments(session, case)],
        )
