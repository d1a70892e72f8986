"""Users page (admins): invite, roles, organizations, disable, reset password; and choosing one's own password
after signing in with a one-time password."""

from __future__ import annotations

import uuid
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response
from pydantic import BaseModel

from vigil.console.deps import AdminDep, IdentityDep
from vigil.console.forms import NO_STORE, OrganizationCodes, PasswordChange, form_error, see_other
from vigil.console.rendering import render
from vigil.errors import NotFound, ValidationFailed, VigilError
from vigil.orgs import service as orgs_service
from vigil.users import service as users_service
from vigil.users.schemas import Role, UserInvited
from vigil.web.deps import DbDep

router = APIRouter()

ROLE_HELP = {
    Role.ADMIN: "Operator staff: every organization, and these administration pages.",
    Role.ANALYST: "Reads and works alerts, cases and investigators of the assigned organizations.",
    Role.VIEWER: "Read-only access to the assigned organizations.",
}


def _user_uuid(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError:
        raise NotFound(f"No user {value}.", code="user_not_found") from None


def _role(value: str) -> Role:
    try:
        return Role(value)
    except ValueError:
        raise ValidationFailed(
            "Choose a role: admin, analyst or viewer.", code="invalid_role", details=[{"field": "role"}]
        ) from None


def _organization_choices(db: DbDep) -> list[tuple[str, str]]:
    with db.read() as session:
        return [(o.organization_code, o.name) for o in orgs_service.list_organizations(session)]


def _safe_next(target: str | None) -> str:
    """Only same-site paths, so the password form cannot be used as an open redirect."""
    if not target:
        return "/alerts"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/alerts"
    return target


def _secret_page(request: Request, shown: UserInvited, *, reset: bool) -> Response:
    """The one-time password, in the POST's own no-store answer; reloading shows the user's page without it."""
    return render(request, "users/password_shown.html", {"user": shown, "reset": reset}, headers=NO_STORE)


@router.get("/users")
def users(request: Request, identity: AdminDep, db: DbDep) -> Response:
    with db.read() as session:
        listed = users_service.list_users(session)
    return render(request, "users/list.html", {"users": listed})


class UserForm(BaseModel):
    name: str = ""
    role: str = ""
    organizations: OrganizationCodes = []


class InviteForm(UserForm):
    email: str = ""


def _invite_page(
    request: Request, db: DbDep, *, form: InviteForm | None = None, status_code: int = 200, **extra: Any
) -> Response:
    context = {
        "organizations": _organization_choices(db),
        "form": form or InviteForm(role=Role.ANALYST.value),
        "roles": list(Role),
        "role_help": ROLE_HELP,
        **extra,
    }
    return render(request, "users/invite.html", context, status_code=status_code)


@router.get("/users/new")
def new_user(request: Request, identity: AdminDep, db: DbDep) -> Response:
    return _invite_page(request, db)


@router.post("/users")
def invite_user(request: Request, identity: AdminDep, db: DbDep, form: Annotated[InviteForm, Form()]) -> Response:
    try:
        with db.write() as session:
            invited = users_service.invite_user(
                session, email=form.email, role=_role(form.role), name=form.name, organization_codes=form.organizations
            )
    except VigilError as error:
        return _invite_page(request, db, form=form, **form_error(error))
    return _secret_page(request, invited, reset=False)


def _user_page(
    request: Request,
    db: DbDep,
    identity: AdminDep,
    user_uuid: uuid.UUID,
    *,
    form: UserForm | None = None,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    with db.read() as session:
        user = users_service.get_user(session, user_uuid)
    context = {
        "user": user,
        "is_self": user.user_uuid == identity.user_uuid,
        "organizations": _organization_choices(db),
        "form": form or UserForm(name=user.name, role=user.role.value, organizations=user.organizations),
        "roles": list(Role),
        "role_help": ROLE_HELP,
        "notice": _user_notice(request),
        **extra,
    }
    return render(request, "users/edit.html", context, status_code=status_code)


def _user_notice(request: Request) -> str | None:
    notices = {
        "saved": "Changes saved.",
        "disabled": "User disabled; their sessions have ended and they cannot sign in.",
        "enabled": "User enabled; they can sign in again.",
        "created": "User invited.",
        "reset": "Password reset; the user's sessions have ended.",
    }
    return next((text for key, text in notices.items() if request.query_params.get(key)), None)


@router.get("/users/{user_id}")
def user_detail(request: Request, identity: AdminDep, db: DbDep, user_id: str) -> Response:
    return _user_page(request, db, identity, _user_uuid(user_id))


@router.post("/users/{user_id}")
def update_user(
    request: Request, identity: AdminDep, db: DbDep, user_id: str, form: Annotated[UserForm, Form()]
) -> Response:
    user_uuid = _user_uuid(user_id)
    try:
        with db.write() as session:
            users_service.update_user(
                session,
                user_uuid,
                role=_role(form.role),
                name=form.name,
                organization_codes=form.organizations,
                acting_user=identity.user_uuid,
            )
    except ValidationFailed as error:
        return _user_page(request, db, identity, user_uuid, form=form, **form_error(error))
    return see_other(f"/users/{user_uuid}?saved=1")


@router.post("/users/{user_id}/disable")
def disable_user(request: Request, identity: AdminDep, db: DbDep, user_id: str) -> Response:
    return _set_disabled(request, identity, db, _user_uuid(user_id), disabled=True)


@router.post("/users/{user_id}/enable")
def enable_user(request: Request, identity: AdminDep, db: DbDep, user_id: str) -> Response:
    return _set_disabled(request, identity, db, _user_uuid(user_id), disabled=False)


def _set_disabled(request: Request, identity: AdminDep, db: DbDep, user_uuid: uuid.UUID, *, disabled: bool) -> Response:
    try:
        with db.write() as session:
            users_service.set_disabled(session, user_uuid, disabled=disabled, acting_user=identity.user_uuid)
    except ValidationFailed as error:
        return _user_page(request, db, identity, user_uuid, status_code=error.status_code, action_error=error.message)
    return see_other(f"/users/{user_uuid}?{'disabled' if disabled else 'enabled'}=1")


@router.get("/users/{user_id}/reset-password")
def confirm_reset(request: Request, identity: AdminDep, db: DbDep, user_id: str) -> Response:
    with db.read() as session:
        user = users_service.get_user(session, _user_uuid(user_id))
    return render(request, "users/reset_confirm.html", {"user": user, "is_self": user.user_uuid == identity.user_uuid})


@router.post("/users/{user_id}/reset-password")
def reset_password(request: Request, identity: AdminDep, db: DbDep, user_id: str) -> Response:
    user_uuid = _user_uuid(user_id)
    try:
        with db.write() as session:
            shown = users_service.reset_password(session, user_uuid, acting_user=identity.user_uuid)
    except ValidationFailed as error:
        return _user_page(request, db, identity, user_uuid, status_code=error.status_code, action_error=error.message)
    return _secret_page(request, shown, reset=True)


# Choosing one's own password after signing in with a one-time password ----------------------------------------


@router.get("/account/choose-password")
def choose_password_form(request: Request, identity: IdentityDep) -> Response:
    context = {"next": _safe_next(request.query_params.get("next"))}
    return render(request, "users/choose_password.html", context)


class ChosenPassword(PasswordChange):
    confirm_password: str = ""
    next: str = "/alerts"


@router.post("/account/choose-password")
def choose_password(
    request: Request, identity: IdentityDep, db: DbDep, form: Annotated[ChosenPassword, Form()]
) -> Response:
    target = _safe_next(form.next)
    try:
        if form.new_password != form.confirm_password:
            raise ValidationFailed("The two new passwords differ.", code="password_mismatch")
        with db.write() as session:
            users_service.change_password(session, identity.user_uuid, form.current_password, form.new_password)
    except ValidationFailed as error:
        return render(
            request,
            "users/choose_password.html",
            {"next": target, "error": error.message},
            status_code=error.status_code,
        )
    return see_other(target)
