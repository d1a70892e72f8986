"""What every console form does after its POST: on a service error the form again with the message inline and
the field it names marked invalid; on success a 303 to the page to show next."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi.responses import RedirectResponse
from pydantic import AfterValidator, BaseModel

from vigil.errors import VigilError

# Pages that show a secret once must never be stored by the browser or a proxy.
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def form_error(error: VigilError) -> dict[str, Any]:
    """A service error as the keyword arguments of a form page: its status, its message and the invalid field."""
    field = next((str(d["field"]) for d in error.details if isinstance(d, dict) and d.get("field")), None)
    return {"status_code": error.status_code, "error": error.message, "error_field": field}


def see_other(url: str) -> RedirectResponse:
    """After a successful POST: the browser GETs ``url``, so reloading it never posts the form again."""
    return RedirectResponse(url, status_code=303)


def _chosen(codes: list[str]) -> list[str]:
    return [code for code in codes if code]


OrganizationCodes = Annotated[list[str], AfterValidator(_chosen)]
"""The organizations ticked in a form's checkboxes (an empty value, which some browsers send, is not one)."""


class PasswordChange(BaseModel):
    """The fields of both password forms: the password in use and the one replacing it."""

    current_password: str = ""
    new_password: str = ""
