"""The console's home page: the SOC dashboard for a window of days and one or all of the user's organizations."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from vigil.console.charts import stacked_bars
from vigil.console.deps import IdentityDep
from vigil.console.pages.alerts import ENTITY_LABELS
from vigil.console.rendering import render
from vigil.dashboard import service
from vigil.dashboard.schemas import NOT_INVESTIGATED, WINDOW_DAYS
from vigil.db.base import epoch_now
from vigil.durations import human_duration
from vigil.errors import VigilError
from vigil.orgs import service as orgs_service
from vigil.web.deps import DbDep

router = APIRouter()

KEY_LABELS = {NOT_INVESTIGATED: "Not investigated"}
#: Column headings of the tables beside the charts, where the full label would not fit (shown on hover).
SHORT_LABELS = {"informational": "Info", "critical": "Crit.", NOT_INVESTIGATED: "Not inv."}


def key_label(key: str) -> str:
    return KEY_LABELS.get(key, key.replace("_", " ").capitalize())


def duration(seconds: float | None) -> str:
    """Whole seconds under an hour, whole minutes above (a mean of days needs no seconds)."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    return human_duration(whole if whole < 3600 else round(whole / 60) * 60)


@router.get("/dashboard")
def dashboard(
    request: Request, identity: IdentityDep, db: DbDep, days: int = WINDOW_DAYS[0], org: str = ""
) -> Response:
    days = days if days in WINDOW_DAYS else WINDOW_DAYS[0]
    code = org.strip().upper()
    error: VigilError | None = None
    figures = None
    with db.read() as session:
        organizations = orgs_service.list_organizations(session, identity.principal)
        try:
            figures = service.build_dashboard(
                session, identity.principal, days=days, now=epoch_now(), organization_code=code or None
            )
        except VigilError as refused:  # another tenant's code (403) or, for an admin, an unknown one (422)
            error = refused
    labels = {key: key_label(key) for key in (*service.SEVERITY_KEYS, *service.VERDICT_KEYS)}
    charts = (
        {
            "alerts": stacked_bars(figures.alerts_by_severity, "alerts", labels),
            "cases": stacked_bars(figures.cases_by_verdict, "cases", labels),
        }
        if figures
        else {}
    )
    return render(
        request,
        "dashboard/page.html",
        {
            "figures": figures,
            "charts": charts,
            "labels": labels,
            "short_labels": SHORT_LABELS,
            "error": error,
            "days": days,
            "window_days": WINDOW_DAYS,
            "org": code,
            "organizations": organizations,
            "human": duration,
            "entity_labels": {kind.value: label for kind, label in ENTITY_LABELS.items()},
        },
        status_code=error.status_code if error else 200,
    )
