"""Console dependencies: who is signed in, what their role allows, and the CSRF check on every unsafe request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from vigil.console.security import SESSION_COOKIE, ConsoleSigner, require_csrf
from vigil.db.session import Database
from vigil.errors import Forbidden, Unauthenticated
from vigil.users import service as users_service
from vigil.users.schemas import ConsoleIdentity


class SignInRequired(Unauthenticated):
    """No valid console session; the console answers it with a redirect to the sign-in page."""

    code = "sign_in_required"


def get_signer(request: Request) -> ConsoleSigner:
    signer: ConsoleSigner = request.app.state.console_signer
    return signer


SignerDep = Annotated[ConsoleSigner, Depends(get_signer)]


async def check_csrf(request: Request, signer: SignerDep) -> None:
    """Applied to the whole console router: safe methods pass, everything else needs a valid token."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        await require_csrf(request, signer)


def signed_in_identity(request: Request) -> ConsoleIdentity | None:
    """The browser's signed-in user, or None; remembered on the request for the page chrome."""
    known: ConsoleIdentity | None = getattr(request.state, "identity", None)
    if known is not None:
        return known
    signer = get_signer(request)
    token = signer.session_token(request.cookies.get(SESSION_COOKIE))
    if token is None:
        return None
    db: Database = request.app.state.db
    with db.read() as session:
        identity = users_service.identity_for_session(session, token)
    request.state.identity = identity
    return identity


class PasswordChangeRequired(Forbidden):
    """Signed in with a password an admin set: the console answers with the choose-password page."""

    code = "password_change_required"


FIRST_SIGN_IN_PATH = "/account/choose-password"


def current_identity(request: Request) -> ConsoleIdentity:
    identity = signed_in_identity(request)
    if identity is None:
        raise SignInRequired("Sign in to use the console.")
    if identity.must_change_password and request.url.path != FIRST_SIGN_IN_PATH:
        raise PasswordChangeRequired("Choose your own password before you continue.")
    return identity


IdentityDep = Annotated[ConsoleIdentity, Depends(current_identity)]


def require_writer(identity: IdentityDep) -> ConsoleIdentity:
    if not identity.can_write:
        raise Forbidden("Viewers can look but not change anything; ask an admin for the analyst role.")
    return identity


def require_admin(identity: IdentityDep) -> ConsoleIdentity:
    if not identity.is_admin:
        raise Forbidden("Only admins can open this page.")
    return identity


WriterDep = Annotated[ConsoleIdentity, Depends(require_writer)]
AdminDep = Annotated[ConsoleIdentity, Depends(require_admin)]
