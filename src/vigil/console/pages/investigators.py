"""Investigators: playbooks list, detail and step editor.

The editor is one server-rendered form holding the whole step list. Add/remove/reorder buttons post the
form back and get it re-rendered (swapped in place with HTMX), so nothing typed is lost; Save validates
with the same catalog checks as `PUT /serviceapi/playbooks/{uuid}` and stores a new version. The detail page
also maps similar alert types to the playbook (plain form posts, like `PUT .../alert-types`).
"""

from __future__ import annotations

import functools
import re
import uuid
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from vigil.console.deps import IdentityDep, WriterDep
from vigil.console.errors import is_htmx
from vigil.console.forms import ListFilters
from vigil.console.rendering import render
from vigil.errors import Conflict, ValidationFailed
from vigil.integrations import service as integrations_service
from vigil.integrations.catalog import VIGIL_SKILL_NAMES, all_integrations, canonical_skill_id
from vigil.investigations.steps import INTERNAL_SKILLS, playbook_skill_inputs
from vigil.orgs import service as orgs_service
from vigil.playbooks import service as playbooks_service
from vigil.playbooks.models import Playbook
from vigil.playbooks.schemas import CheckpointStep, OnError, PlaybookDefinition, PlaybookStep, SkillStep
from vigil.users.schemas import ConsoleIdentity
from vigil.web.deps import DbDep

router = APIRouter()

PAGE_SIZE = 100
MAX_STEPS = 50
BUILTIN = "Vigil (built in)"
NEW_CHECKPOINT_QUESTION = (
    "Vigil is checking the alert '{{ alert.alert_type }}' that involves your account. Was this you?"
)


@dataclass(frozen=True)
class SkillInfo:
    id: str
    name: str
    integration_id: str | None
    integration_name: str
    purpose: str
    writes: bool
    inputs: tuple[tuple[str, bool, str], ...]  # name, required, description


@dataclass(frozen=True)
class Catalog:
    skills: dict[str, SkillInfo]
    groups: tuple[tuple[str, tuple[str, ...]], ...]  # integration name → skill ids, for the add-step picker
    input_models: dict[str, type[BaseModel]]

    def info(self, ref: str) -> SkillInfo | None:
        """The skill a step names, by id or by display name (legacy playbooks, a hand-typed name)."""
        return self.skills.get(canonical_skill_id(ref.strip()))


@functools.cache
def catalog() -> Catalog:
    """What the editor offers and checks against: the integrations' skills plus Vigil's internal ones."""
    skills: dict[str, SkillInfo] = {
        skill_id: SkillInfo(
            skill_id, VIGIL_SKILL_NAMES[skill_id], None, BUILTIN, "Runs inside Vigil on its own data.", False, ()
        )
        for skill_id in INTERNAL_SKILLS
    }
    models = playbook_skill_inputs()
    groups: list[tuple[str, tuple[str, ...]]] = [(BUILTIN, tuple(INTERNAL_SKILLS))]
    for integration in all_integrations():
        for declared in integration.skills:
            fields = tuple(
                (name, info.is_required(), info.description or "")
                for name, info in declared.input_model.model_fields.items()
            )
            skills[declared.id] = SkillInfo(
                declared.id, declared.name, integration.id, integration.name, declared.purpose, declared.writes, fields
            )
        groups.append((integration.name, tuple(s.id for s in integration.skills)))
    return Catalog(skills=skills, groups=tuple(groups), input_models=models)


# ---------------------------------------------------------------------------------------------- list


@router.get("/investigators")
def investigator_list(
    request: Request,
    identity: IdentityDep,
    db: DbDep,
    organization: str = "",
    provider: str = "",
    q: str = "",
    page: int = 1,
) -> Response:
    filters = ListFilters(
        "/investigators",
        organization=organization.strip().upper(),
        provider=provider.strip().lower(),
        q=q.strip()[:200],
    )
    page = max(page, 1)
    principal = identity.principal
    with db.read() as session:
        summaries, total = playbooks_service.list_playbook_summaries(
            session,
            principal,
            organization_code=filters.given("organization"),
            provider=filters.given("provider"),
            q=filters.given("q"),
            limit=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
        )
        organizations = [o.organization_code for o in orgs_service.list_organizations(session, principal)]
        providers = [p.alert_provider for p in orgs_service.list_providers(session)]
    return render(
        request,
        "investigators/list.html",
        {
            "summaries": summaries,
            "total": total,
            "filters": filters,
            "filtered": bool(filters.active),
            "organizations": organizations,
            "providers": providers,
            "prev_url": filters.url(page=page - 1) if page > 1 else None,
            "next_url": filters.url(page=page + 1) if page * PAGE_SIZE < total else None,
        },
    )


# -------------------------------------------------------------------------------------------- detail


def _load(session: Session, identity: ConsoleIdentity, playbook_uuid: uuid.UUID) -> Playbook:
    """The playbook, if it belongs to one of the signed-in user's organizations (otherwise not found)."""
    return playbooks_service.get_playbook(session, identity.principal, playbook_uuid)


def _connections(session: Session, identity: ConsoleIdentity, playbook: Playbook) -> dict[str, list[str]]:
    """The organization's connection names per integration id (for the connection choice)."""
    by_integration: dict[str, list[str]] = {}
    for connection, _ in integrations_service.list_connections(
        session, identity.principal, organization_code=playbook.organization_code
    ):
        by_integration.setdefault(connection.integration_id, []).append(connection.name)
    return by_integration


@router.get("/investigators/{playbook_uuid}")
def investigator_detail(
    request: Request, playbook_uuid: uuid.UUID, identity: IdentityDep, db: DbDep, version: int | None = None
) -> Response:
    return _detail_page(request, identity, db, playbook_uuid, version)


def _detail_page(
    request: Request,
    identity: ConsoleIdentity,
    db: DbDep,
    playbook_uuid: uuid.UUID,
    version: int | None = None,
    *,
    types_error: str | None = None,
    status_code: int = 200,
) -> Response:
    with db.read() as session:
        playbook = _load(session, identity, playbook_uuid)
        ref = playbooks_service.get_version(session, identity.principal, playbook_uuid, version)
        versions = playbooks_service.list_versions(session, playbook)
        connections = _connections(session, identity, playbook)
        mapped_types = playbooks_service.mapped_alert_types(session, playbook)
    shown = next(v for v in versions if v.version == ref.version)
    return render(
        request,
        "investigators/detail.html",
        {
            "playbook": playbook,
            "ref": ref,
            "shown": shown,
            "versions": versions,
            "steps": ref.definition.steps,
            "catalog": catalog(),
            "connections": connections,
            "mapped_types": mapped_types,
            "types_error": types_error,
            "saved": request.query_params.get("saved"),
        },
        status_code=status_code,
    )


# -------------------------------------------------------------------------------------------- editor


@dataclass
class StepDraft:
    """One step as the editor form holds it: strings exactly as typed, validated only on save."""

    kind: str
    name: str = ""
    skill: str = ""
    connection: str = ""
    on_error: str = OnError.CONTINUE.value
    inputs: list[tuple[str, str]] = field(default_factory=list)
    user_email: str = ""
    question: str = ""
    timeout_seconds: str = ""  # blank: the organization's (else the service-wide) default

    @classmethod
    def of(cls, step: PlaybookStep) -> StepDraft:
        if isinstance(step, SkillStep):
            return cls(
                kind="skill",
                name=step.name,
                skill=step.skill,
                connection=step.connection or "",
                on_error=step.on_error.value,
                inputs=list(step.inputs.items()),
            )
        if isinstance(step, CheckpointStep):
            return cls(
                kind="checkpoint",
                name=step.name,
                user_email=step.user_email,
                question=step.question,
                timeout_seconds="" if step.timeout_seconds is None else str(step.timeout_seconds),
            )
        return cls(kind="analyze", name=step.name)

    @classmethod
    def new(cls, choice: str) -> StepDraft:
        if choice == "checkpoint":
            return cls(
                kind="checkpoint",
                name="Ask the user to confirm",
                user_email="{{ entities.emails[0] }}",
                question=NEW_CHECKPOINT_QUESTION,
            )
        if choice == "analyze":
            return cls(kind="analyze", name="AI analysis")
        skill_id = choice.removeprefix("skill:")
        info = catalog().info(skill_id)
        if info is None:
            return cls(kind="skill", name=skill_id, skill=skill_id)
        inputs = [(name, "") for name, required, _ in info.inputs if required]
        return cls(kind="skill", name=info.name, skill=info.id, inputs=inputs)

    def raw(self) -> dict[str, Any]:
        """The step as the playbook schema expects it (pydantic reports what is wrong)."""
        if self.kind == "skill":
            return {
                "kind": "skill",
                "name": self.name.strip(),
                "skill": self.skill.strip(),
                "connection": self.connection.strip() or None,
                "inputs": {name.strip(): value for name, value in self.inputs if name.strip()},
                "on_error": self.on_error,
            }
        if self.kind == "checkpoint":
            typed = self.timeout_seconds.strip()
            timeout: int | str | None = int(typed) if typed.isdigit() else typed or None
            return {
                "kind": "checkpoint",
                "name": self.name.strip(),
                "user_email": self.user_email.strip(),
                "question": self.question.strip(),
                "timeout_seconds": timeout,
            }
        return {"kind": self.kind, "name": self.name.strip()}


def _drafts_from_form(form: FormData) -> list[StepDraft]:
    def text(name: str) -> str:
        value = form.get(name)
        return value if isinstance(value, str) else ""

    drafts: list[StepDraft] = []
    count = min(int(text("step_count")) if text("step_count").isdigit() else 0, MAX_STEPS + 1)
    for i in range(count):
        rows = int(text(f"s{i}-input_count")) if text(f"s{i}-input_count").isdigit() else 0
        drafts.append(
            StepDraft(
                kind=text(f"s{i}-kind") or "skill",
                name=text(f"s{i}-name"),
                skill=text(f"s{i}-skill"),
                connection=text(f"s{i}-connection"),
                on_error=text(f"s{i}-on_error") or OnError.CONTINUE.value,
                inputs=[(text(f"s{i}-in{j}-name"), text(f"s{i}-in{j}-value")) for j in range(min(rows, 100))],
                user_email=text(f"s{i}-user_email"),
                question=text(f"s{i}-question"),
                timeout_seconds=text(f"s{i}-timeout_seconds"),
            )
        )
    return drafts


async def read_form(request: Request) -> FormData:
    return await request.form()


FormDep = Annotated[FormData, Depends(read_form)]


def _apply(op: str, drafts: list[StepDraft], new_step: str) -> str | None:
    """Structural edits (no validation); returns a message when the edit cannot be made."""
    match = re.fullmatch(r"(up|down|remove|addinput):(\d+)", op)
    if op == "add":
        if len(drafts) >= MAX_STEPS:
            return f"A playbook holds at most {MAX_STEPS} steps."
        if not new_step:
            return "Choose the kind of step to add."
        draft = StepDraft.new(new_step)
        # New lookups go before a final analysis step, which should see their evidence.
        at = len(drafts) - 1 if drafts and drafts[-1].kind == "analyze" and draft.kind != "analyze" else len(drafts)
        drafts.insert(at, draft)
        return None
    if match is None:
        return None
    action, index = match.group(1), int(match.group(2))
    if not 0 <= index < len(drafts):
        return None
    if action == "remove":
        drafts.pop(index)
    elif action == "up" and index > 0:
        drafts[index - 1], drafts[index] = drafts[index], drafts[index - 1]
    elif action == "down" and index < len(drafts) - 1:
        drafts[index + 1], drafts[index] = drafts[index], drafts[index + 1]
    elif action == "addinput":
        drafts[index].inputs.append(("", ""))
    return None


def _console_problems(drafts: list[StepDraft], connections: dict[str, list[str]]) -> list[dict[str, Any]]:
    """What only the console can check: repeated input names (a form can send them) and unknown connections."""
    problems: list[dict[str, Any]] = []
    known = catalog()
    for index, draft in enumerate(drafts):
        if draft.kind != "skill":
            continue
        names = [name.strip() for name, _ in draft.inputs if name.strip()]
        for name in sorted({n for n in names if names.count(n) > 1}):
            problems.append({"field": f"steps.{index}.inputs.{name}", "message": f"The input {name!r} is given twice."})
        info = known.info(draft.skill)
        chosen = draft.connection.strip()
        if (
            chosen
            and info is not None
            and info.integration_id
            and chosen not in connections.get(info.integration_id, [])
        ):
            problems.append(
                {
                    "field": f"steps.{index}.connection",
                    "message": f"The organization has no {info.integration_name} connection named {chosen!r}.",
                }
            )
    return problems


_STEP_FIELD = re.compile(r"^steps\.(\d+)(?:\.(?:skill|checkpoint|analyze))?(?:\.(.*))?$")


def _sort_errors(details: list[dict[str, Any]]) -> tuple[dict[int, list[str]], list[str]]:
    """Errors by step index (shown beside the step), and the rest (shown above the steps)."""
    by_step: dict[int, list[str]] = {}
    general: list[str] = []
    for detail in details:
        where = str(detail.get("field") or "")
        message = str(detail.get("message") or "") or f"Unknown value {detail.get('value')!r}."
        match = _STEP_FIELD.match(where)
        if match is None:
            general.append(f"{where}: {message}" if where else message)
            continue
        part = match.group(2)
        if part and detail.get("type"):  # pydantic's messages do not name the field
            message = f"{part.replace('_', ' ')}: {message}"
        by_step.setdefault(int(match.group(1)), []).append(message)
    return by_step, general


def _editor_page(
    request: Request,
    session: Session,
    identity: ConsoleIdentity,
    playbook: Playbook,
    *,
    drafts: list[StepDraft],
    base_version: int,
    note: str = "",
    message: str | None = None,
    step_errors: dict[int, list[str]] | None = None,
    errors: list[str] | None = None,
    status_code: int = 200,
) -> Response:
    return render(
        request,
        "investigators/edit.html",
        {
            "playbook": playbook,
            "drafts": drafts,
            "base_version": base_version,
            "note": note,
            "message": message,
            "step_errors": step_errors or {},
            "errors": errors or [],
            "catalog": catalog(),
            "connections": _connections(session, identity, playbook),
            "on_error_choices": [choice.value for choice in OnError],
        },
        status_code=status_code,
    )


@router.get("/investigators/{playbook_uuid}/edit")
def edit_form(
    request: Request, playbook_uuid: uuid.UUID, identity: WriterDep, db: DbDep, version: int | None = None
) -> Response:
    """Start editing from the current version (or `?version=` to bring an older one back as a new version)."""
    with db.read() as session:
        playbook = _load(session, identity, playbook_uuid)
        ref = playbooks_service.get_version(session, identity.principal, playbook_uuid, version)
        note = f"Restored from version {ref.version}" if version and version != playbook.current_version else ""
        return _editor_page(
            request,
            session,
            identity,
            playbook,
            drafts=[StepDraft.of(step) for step in ref.definition.steps],
            base_version=playbook.current_version,
            note=note,
        )


@router.post("/investigators/{playbook_uuid}/edit")
def edit_submit(request: Request, playbook_uuid: uuid.UUID, identity: WriterDep, db: DbDep, form: FormDep) -> Response:
    drafts = _drafts_from_form(form)
    op = str(form.get("op") or "save")
    note = str(form.get("note") or "").strip()[:2000]
    base = str(form.get("base_version") or "")
    base_version = int(base) if base.isdigit() else None

    def editor_again(session: Session, playbook: Playbook, *, status_code: int, **problems: Any) -> Response:
        """The editor with what was typed (steps, base version, note), and what to fix in it."""
        return _editor_page(
            request,
            session,
            identity,
            playbook,
            drafts=drafts,
            base_version=base_version or playbook.current_version,
            note=note,
            status_code=status_code,
            **problems,
        )

    if op != "save":
        message = _apply(op, drafts, str(form.get("new_step") or ""))
        with db.read() as session:
            playbook = _load(session, identity, playbook_uuid)
            return editor_again(
                session, playbook, errors=[message] if message else None, status_code=422 if message else 200
            )
    raw = {"steps": [draft.raw() for draft in drafts]}
    try:
        with db.write() as session:
            playbook = _load(session, identity, playbook_uuid)
            problems = _console_problems(drafts, _connections(session, identity, playbook))
            if problems:
                raise ValidationFailed("The playbook has problems.", code="invalid_playbook", details=problems)
            rules = catalog()
            ref = playbooks_service.save_new_version(
                session,
                identity.principal,
                playbook_uuid,
                raw,
                skill_inputs=rules.input_models,
                actor=identity.email,
                note=note,
                expected_version=base_version,
            )
            saved = ref.version
    except (ValidationFailed, Conflict) as error:
        with db.read() as session:
            playbook = _load(session, identity, playbook_uuid)
            if isinstance(error, Conflict) and _same_as_current(session, identity, playbook_uuid, raw):
                return _saved(request, playbook_uuid, playbook.current_version)  # a double submit: saved once
            step_errors, general = _sort_errors(error.details)
            heading = error.message if isinstance(error, Conflict) else "Nothing was saved; fix the marked steps."
            return editor_again(
                session,
                playbook,
                step_errors=step_errors,
                errors=[heading, *general],
                # HTMX swaps 422 answers in place but shows other errors as a toast: a conflict is shown in place too.
                status_code=422 if is_htmx(request) else error.status_code,
            )
    return _saved(request, playbook_uuid, saved)


def _same_as_current(
    session: Session, identity: ConsoleIdentity, playbook_uuid: uuid.UUID, raw: dict[str, Any]
) -> bool:
    try:
        submitted = PlaybookDefinition.model_validate(raw)
    except ValueError:
        return False
    return playbooks_service.get_version(session, identity.principal, playbook_uuid).definition == submitted


def _saved(request: Request, playbook_uuid: uuid.UUID, version: int) -> Response:
    target = f"/investigators/{playbook_uuid}?saved={version}"
    if is_htmx(request):
        return Response(status_code=204, headers={"HX-Redirect": target})
    return RedirectResponse(target, status_code=303)


# -------------------------------------------------------------------------------------------- alert types


@router.post("/investigators/{playbook_uuid}/alert-types")
def alert_types_submit(
    request: Request, playbook_uuid: uuid.UUID, identity: WriterDep, db: DbDep, form: FormDep
) -> Response:
    """Add (`op=add`) or remove (`op=remove`) one alert type served by this playbook besides its own."""
    alert_type = str(form.get("alert_type") or "").strip()
    try:
        with db.write() as session:
            playbook = _load(session, identity, playbook_uuid)
            served = set(playbooks_service.mapped_alert_types(session, playbook))
            wanted = served - {alert_type} if form.get("op") == "remove" else served | {alert_type}
            playbooks_service.set_mapped_alert_types(
                session, identity.principal, playbook_uuid, wanted, actor=identity.email
            )
    except (ValidationFailed, Conflict) as error:
        return _detail_page(
            request, identity, db, playbook_uuid, types_error=error.message, status_code=error.status_code
        )
    return RedirectResponse(f"/investigators/{playbook_uuid}", status_code=303)
