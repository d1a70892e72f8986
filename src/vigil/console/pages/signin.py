"""Sign-in, sign-out and the signed-in user's own password."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode, urlsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response

from vigil.console.deps import IdentityDep, SignerDep, signed_in_identity
from vigil.console.forms import PasswordChange
from vigil.console.rendering import render
from vigil.console.security import (
    SESSION_COOKIE,
    SignInThrottle,
    clear_session_cookie,
    ensure_prelogin_cookie,
    prelogin_anchor,
    set_session_cookie,
)
from vigil.errors import RateLimited, Unauthenticated, ValidationFailed
from vigil.users import service as users_service
from vigil.web.deps import DbDep

router = APIRouter()


def _safe_next(target: str | None) -> str:
    """Only same-site paths, so the sign-in form cannot be used as an open redirect."""
    if not target:
        return "/alerts"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return "/alerts"
    return target


def _login_page(
    request: Request,
    *,
    email: str = "",
    error: str | None = None,
    next_path: str | None = None,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    anchor = prelogin_anchor(request)
    signer = request.app.state.console_signer
    page = render(
        request,
        "login.html",
        {
            "csrf_token": signer.csrf_token(anchor),
            "email": email,
            "error": error,
            "next": _safe_next(next_path or request.query_params.get("next")),
        },
        status_code=status_code,
        headers=headers,
    )
    ensure_prelogin_cookie(request, page, anchor)
    return page


@router.get("/login")
def login_form(request: Request) -> Response:
    """Signed in already: go on. A cookie whose session ended is dropped, so the form's CSRF token (bound to
    the pre-login cookie) is what the sign-in POST is checked against."""
    if signed_in_identity(request) is not None:
        return RedirectResponse(_safe_next(request.query_params.get("next")), status_code=303)
    page = _login_page(request)
    if SESSION_COOKIE in request.cookies:
        clear_session_cookie(page)
    return page


@router.post("/login")
def login(
    request: Request,
    db: DbDep,
    signer: SignerDep,
    email: Annotated[str, Form()] = "",
    password: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/alerts",
) -> Response:
    throttle: SignInThrottle = request.app.state.signin_throttle
    try:
        throttle.check(email, request.client.host if request.client else "unknown")
        # Checked in a read transaction first: argon2 takes a while, and a wrong guess must not hold the write
        # transaction (SQLite's one writer) meanwhile. Only the right password checks again and signs in.
        with db.read() as session:
            users_service.verify_password(session, email, password)
        with db.write() as session:
            user = users_service.verify_password(session, email, password)
            token = users_service.start_session(session, user)
            must_change_password = user.must_change_password
    except RateLimited as error:
        wait = error.headers.get("Retry-After", "60")
        return _login_page(
            request,
            email=email,
            error=f"Too many sign-in attempts; wait {wait} s.",
            next_path=next,
            status_code=429,
            headers={"Retry-After": wait},
        )
    except Unauthenticated as error:
        return _login_page(request, email=email, error=error.message, next_path=next, status_code=401)
    target = _safe_next(next)
    if must_change_password:
        # A password an admin set (invitation, reset) is replaced before the user starts working.
        target = "/account/choose-password?" + urlencode({"next": target})
    response = RedirectResponse(target, status_code=303)
    set_session_cookie(request, response, signer.session_cookie_value(token), users_service.SESSION_LIFETIME_SECONDS)
    return response


@router.post("/logout")
def logout(request: Request, db: DbDep, signer: SignerDep) -> Response:
    token = signer.session_token(request.cookies.get(SESSION_COOKIE))
    if token is not None:
        with db.write() as session:
            users_service.end_session(session, token)
    response = RedirectResponse("/login", status_code=303)
    clear_session_cookie(response)
    return response


@router.get("/account")
def account(request: Request, identity: IdentityDep) -> Response:
    return render(request, "account.html", {"saved": request.query_params.get("saved") == "1"})


@router.post("/account/password")
def change_password(
    request: Request, identity: IdentityDep, db: DbDep, form: Annotated[PasswordChange, Form()]
) -> Response:
    try:
        with db.write() as session:
            users_service.change_password(session, identity.user_uuid, form.current_password, form.new_password)
    except ValidationFailed as error:
        return render(request, "account.html", {"error": error.message}, status_code=error.status_code)
    return RedirectResponse("/account?saved=1", status_code=303)
