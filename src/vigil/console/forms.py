"""What every console form does after its POST: on a service error the form again with the message inline and
the field it names marked invalid; on success a 303 to the page to show next. And the filters of the list pages'
GET forms."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

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


class ListFilters(dict[str, str]):
    """A list page's filters as its GET form sent them, cleaned: shown back in the form (by name), handed to the
    service (``given``: an empty filter is none) and kept in the links to other pages (``url``)."""

    def __init__(self, path: str, **values: str) -> None:
        super().__init__(values)
        self.path = path

    def given(self, name: str) -> str | None:
        return self[name] or None

    @property
    def active(self) -> dict[str, str]:
        return {name: value for name, value in self.items() if value}

    def url(self, **paging: str | int) -> str:
        """This page with the active filters and ``paging`` (a cursor or page number)."""
        return f"{self.path}?{urlencode({**self.active, **paging})}"
