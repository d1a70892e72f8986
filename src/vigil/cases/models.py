"""Cases: exactly one per investigated alert, numbered per organization, with timeline and comments."""

from __future__ import annotations

import uuid

from sqlalchemy import BigInteger, Float, ForeignKey, Index, String, Text, UniqueConstraint, Uuid
from sqlalchemy.orm import Mapped, mapped_column

from vigil.db.base import AutoIncrementId, Base


class Case(Base):
    __tablename__ = "cases"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    case_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, unique=True, default=uuid.uuid4)
    case_id: Mapped[str] = mapped_column(String(40), unique=True)
    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE")
    )
    organization_code: Mapped[str] = mapped_column(String(16))
    alert_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("alerts.alert_uuid", ondelete="CASCADE"), unique=True
    )
    alert_id: Mapped[str] = mapped_column(String(120))
    playbook_uuid: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    playbook_version: Mapped[int | None] = mapped_column(BigInteger)
    attempt: Mapped[int] = mapped_column(BigInteger, default=0)
    title: Mapped[str] = mapped_column(String(600))
    status: Mapped[str] = mapped_column(String(30))
    severity: Mapped[str] = mapped_column(String(20))
    verdict: Mapped[str] = mapped_column(String(20))
    category: Mapped[str] = mapped_column(String(40))
    disposition: Mapped[str] = mapped_column(String(30))
    ai_disposition: Mapped[str] = mapped_column(String(30))
    ai_confidence: Mapped[float] = mapped_column(Float)
    summary: Mapped[str] = mapped_column(Text)
    findings: Mapped[str] = mapped_column(Text, default="[]")
    recommended_actions: Mapped[str] = mapped_column(Text, default="[]")
    # The evidence behind the verdict: JSON list of vigil.ai.schemas.Citation.
    citations: Mapped[str] = mapped_column(Text, default="[]", server_default="[]")
    # Who wrote the verdict (`builtin` or a model string), and why the built-in analyst finished instead.
    ai_model: Mapped[str | None] = mapped_column(String(200))
    ai_fallback_reason: Mapped[str | None] = mapped_column(Text)
    assignee: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[int] = mapped_column(BigInteger)
    modified_at: Mapped[int] = mapped_column(BigInteger)
    closed_at: Mapped[int | None] = mapped_column(BigInteger)

    # The cases page filters by organization, status and assignee, newest first.
    __table_args__ = (
        Index("ix_cases_org_id", "organization_uuid", "id"),
        Index("ix_cases_status_id", "status", "id"),
        Index("ix_cases_assignee_id", "assignee", "id"),
    )


class CaseCounter(Base):
    """Last case number per organization; bumped in the same transaction as the case insert."""

    __tablename__ = "case_counters"

    organization_uuid: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("organizations.organization_uuid", ondelete="CASCADE"), primary_key=True
    )
    last_value: Mapped[int] = mapped_column(BigInteger, default=0)


class CaseEvent(Base):
    __tablename__ = "case_events"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    case_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("cases.case_uuid", ondelete="CASCADE"), index=True)
    at: Mapped[int] = mapped_column(BigInteger)
    actor: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(40))
    message: Mapped[str] = mapped_column(Text, default="")
    # For analyst changes: which field changed, from what, to what (None for other events).
    field: Mapped[str | None] = mapped_column(String(40))
    from_value: Mapped[str | None] = mapped_column(String(320))
    to_value: Mapped[str | None] = mapped_column(String(320))


class CaseComment(Base):
    __tablename__ = "case_comments"

    id: Mapped[int] = mapped_column(AutoIncrementId, primary_key=True, autoincrement=True)
    case_uuid: Mapped[uuid.UUID] = mapped_column(Uuid, ForeignKey("cases.case_uuid", ondelete="CASCADE"), index=True)
    author: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    created_at: Mapped[int] = mapped_column(BigInteger)
    # A form's (or an API client's Idempotency-Key) id for the submission, so a double submit adds one comment.
    submission_id: Mapped[str | None] = mapped_column(String(128))

    __table_args__ = (UniqueConstraint("case_uuid", "submission_id", name="uq_case_comments_case_submission"),)
