"""Alerts page (the triage queue: filters, sort, live rows and new alerts) and alert detail (content, entities,
steps, timeline, actions)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy.orm import Session

from vigil.alerts import service
from vigil.alerts.constants import MAX_ALERT_TYPE_LENGTH, InvestigationStatus
from vigil.alerts.models import Alert
from vigil.alerts.schemas import AlertFilters
from vigil.console import queue
from vigil.console.deps import IdentityDep, WriterDep
from vigil.console.rendering import render
from vigil.console.report import alert_report
from vigil.console.timezones import browser_zone
from vigil.core.entities import EntityKind
from vigil.db.base import epoch_now
from vigil.db.pagination import decode_cursor, encode_cursor
from vigil.errors import Conflict, Forbidden, NotFound, ValidationFailed, VigilError
from vigil.investigations import flows
from vigil.investigations import service as investigations
from vigil.orgs import service as orgs_service
from vigil.playbooks import service as playbooks_service
from vigil.users.schemas import ConsoleIdentity
from vigil.web.deps import DbDep, EngineDep

router = APIRouter()

PAGE_SIZES = (25, 50, 100, 200)
#: Columns whose first click sorts highest (or latest) first.
DESCENDING_FIRST = frozenset({"severity", "confidence", "created", "completed"})
TIME_PRESETS = {"1h": ("Last hour", 3600), "24h": ("Last 24 hours", 86_400), "7d": ("Last 7 days", 7 * 86_400)}
TIME_PRESETS["30d"] = ("Last 30 days", 30 * 86_400)
#: At most this many pending rows are kept live (newest first), which keeps the poll's URL a few KiB.
MAX_LIVE_ROWS = 100
ENTITY_LABELS = {
    EntityKind.IPS: "IP addresses",
    EntityKind.DOMAINS: "Domains",
    EntityKind.URLS: "URLs",
    EntityKind.MD5S: "MD5",
    EntityKind.SHA1S: "SHA-1",
    EntityKind.SHA256S: "SHA-256",
    EntityKind.EMAILS: "Emails",
    EntityKind.USERS: "Users",
    EntityKind.HOSTS: "Hosts",
    EntityKind.DEVICE_IDS: "Device IDs",
}
NOTICES = {
    "retried": "Investigation re-run requested; the status below updates as it runs.",
    "submitted": "Alert type saved; the alert was submitted for investigation.",
}


@dataclass
class ListQuery:
    """The Alerts page's filters and order as they arrive in the URL (a GET form: every view is a shareable link)."""

    org: str = ""
    provider: str = ""
    status: str = ""
    alert_type: str = ""
    q: str = ""
    range: str = ""
    after: str = ""
    before: str = ""
    tz: str = ""
    limit: int = 50
    sort: str = queue.DEFAULT_SORT
    errors: list[str] = field(default_factory=list)

    def filter_params(self) -> dict[str, str]:
        """Non-empty filter parameters (what the live feed needs to pick the same alerts)."""
        values = {
            "org": self.org,
            "provider": self.provider,
            "status": self.status,
            "type": self.alert_type,
            "q": self.q,
            "range": self.range,
            "after": self.after if self.range == "custom" else "",
            "before": self.before if self.range == "custom" else "",
            "tz": self.tz if self.range == "custom" else "",
        }
        return {name: value for name, value in values.items() if value}

    def params(self) -> dict[str, str]:
        """Filters, order and page size: the view the pager, the sort links and saved filters keep."""
        extra = {
            "sort": "" if self.sort == queue.DEFAULT_SORT else self.sort,
            "limit": "" if self.limit == 50 else str(self.limit),
        }
        return {**self.filter_params(), **{name: value for name, value in extra.items() if value}}

    def is_filtered(self) -> bool:
        return bool(self.filter_params())

    def sort_link(self, column: str) -> str:
        """The URL that sorts by `column`: the other direction when it is the current order, else its natural
        first direction (highest first for severity, confidence and times; A to Z for names). First page."""
        if self.sort.removeprefix("-") == column:
            target = column if self.sort.startswith("-") else f"-{column}"
        else:
            target = f"-{column}" if column in DESCENDING_FIRST else column
        return f"/alerts?{urlencode({**self.params(), 'sort': target})}"

    def aria_sort(self, column: str) -> str:
        if self.sort.removeprefix("-") != column:
            return "none"
        return "descending" if self.sort.startswith("-") else "ascending"

    def filters(self, now: int) -> AlertFilters:
        """The service's filters; problems are collected in `errors` (shown above the table)."""
        status: int | None = None
        if self.status:
            try:
                status = int(InvestigationStatus(int(self.status)))
            except ValueError:
                self.errors.append(f"Unknown status {self.status!r}.")
        created_after = created_before = None
        if self.range in TIME_PRESETS:
            created_after = now - TIME_PRESETS[self.range][1]
        elif self.range == "custom":
            zone = self._zone()
            created_after = self._epoch(self.after, zone, "From")
            created_before = self._epoch(self.before, zone, "To")
            if created_after is not None and created_before is not None and created_after >= created_before:
                self.errors.append("The time range ends before it starts.")
        elif self.range:
            self.errors.append(f"Unknown time range {self.range!r}.")
        if len(self.q) > 200:
            self.errors.append("Search text is limited to 200 characters.")
        return AlertFilters(
            organization_code=self.org or None,
            alert_provider=self.provider or None,
            alert_type=self.alert_type or None,
            investigation_status=status,
            created_after=created_after,
            created_before=created_before,
            q=self.q[:200] or None,
        )

    def _zone(self) -> ZoneInfo:
        """The browser's IANA time zone (the form's script fills it in); UTC, as the page then says, for a
        missing or unknown name."""
        zone = browser_zone(self.tz)
        if zone is None:
            self.tz = ""
            return ZoneInfo("UTC")
        return zone

    def _epoch(self, text: str, zone: ZoneInfo, label: str) -> int | None:
        if not text:
            return None
        try:
            local = datetime.fromisoformat(text)
        except ValueError:
            self.errors.append(f"{label}: {text!r} is not a date and time.")
            return None
        if local.tzinfo is None:
            local = local.replace(tzinfo=zone)
        return int(local.timestamp())


def list_query(
    org: str = "",
    provider: str = "",
    status: str = "",
    alert_type: Annotated[str, Query(alias="type")] = "",
    q: str = "",
    range: str = "",
    after: str = "",
    before: str = "",
    tz: str = "",
    limit: int = 50,
    sort: str = "",
) -> ListQuery:
    """The list's and the live feed's query parameters, read the same way for both."""
    query = ListQuery(
        org=org.strip().upper(),
        provider=provider.strip().lower(),
        status=status.strip(),
        alert_type=alert_type.strip(),
        q=q.strip(),
        range=range if range else ("custom" if after or before else ""),
        after=after.strip(),
        before=before.strip(),
        tz=tz.strip(),
        limit=limit if limit in PAGE_SIZES else 50,
    )
    if sort.strip():
        chosen = queue.parse_sort(sort.strip())
        if chosen is None:
            query.errors.append(f"Unknown sort {sort.strip()[:40]!r}.")
        else:
            query.sort = chosen
    return query


ListQueryDep = Annotated[ListQuery, Depends(list_query)]


def row_version(alert: Alert) -> str:
    """Changes whenever a row's visible investigation state does, so live polls re-render only those rows."""
    return f"{alert.investigation_status}.{alert.modified_at}.{int(alert.investigator is not None)}"


def _rows_context(
    session: Session,
    identity: ConsoleIdentity,
    alerts: list[Alert],
    feed: dict[str, str] | None,
) -> dict[str, object]:
    """What the rows and the poller need: each row's case, playbook link and provider name; the pending rows
    to keep live and, when `feed` (filters and a `since` cursor) is given, the next "newer than" poll."""
    pending = [a for a in alerts if service.is_investigation_pending(a)][:MAX_LIVE_ROWS]
    watched = [("a", f"{a.alert_uuid}:{row_version(a)}") for a in pending]
    return {
        "alerts": alerts,
        "links": playbooks_service.investigator_links(session, alerts),
        "cases": queue.cases_by_alert(session, identity.principal, alerts),
        "provider_names": {p.alert_provider: p.name for p in orgs_service.list_all_providers(session)},
        "pending": {a.alert_uuid for a in pending},
        "live_on": bool(pending),
        "live_params": urlencode([*(feed or {}).items(), *watched]) if feed or watched else "",
        "identity": identity,
    }


def _pager(query: ListQuery, window: service.AlertWindow | None, page: int, has_next: bool) -> dict[str, str | None]:
    """Pager links: Older/Newer keyset cursors for the newest-first view, Previous/Next pages for the others."""
    base = query.params()
    if window is not None:
        older, newer = window.older_cursor, window.newer_cursor
        return {
            "older_url": f"/alerts?{urlencode({**base, 'cursor': older})}" if older else None,
            "newer_url": f"/alerts?{urlencode({**base, 'newer': newer})}" if newer else None,
        }
    return {
        "previous_url": f"/alerts?{urlencode({**base, 'page': page - 1})}" if page > 1 else None,
        "next_url": f"/alerts?{urlencode({**base, 'page': page + 1})}" if has_next else None,
    }


@router.get("/alerts")
def alert_list(
    request: Request,
    identity: IdentityDep,
    db: DbDep,
    query: ListQueryDep,
    cursor: str = "",
    newer: str = "",
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> Response:
    principal = identity.principal
    keyset = query.sort == queue.NEWEST_SORT
    window = service.AlertWindow(alerts=[], older_cursor=None, newer_cursor=None) if keyset else None
    alerts: list[Alert] = []
    has_next = False
    feed: dict[str, str] | None = None
    with db.read() as session:
        organizations = orgs_service.list_organizations(session, principal)
        providers = orgs_service.list_providers(session)
        alert_types = playbooks_service.known_alert_types(session, principal)
        filters = query.filters(epoch_now())
        if not query.errors:
            try:
                if keyset:
                    window = service.browse_alerts(
                        session,
                        principal,
                        filters,
                        older_than=cursor or None,
                        newer_than=newer or None,
                        limit=query.limit,
                    )
                    alerts = window.alerts
                else:
                    found = queue.sorted_page(session, principal, filters, query.sort, page, query.limit)
                    alerts, has_next = found.alerts, found.has_next
                feed = {**query.filter_params(), "since": encode_cursor(queue.last_id(session, principal, filters))}
            except Forbidden:
                query.errors.append(f"You have no access to organization {query.org}.")
            except VigilError as error:
                query.errors.append(error.message)
        rows = _rows_context(session, identity, alerts, feed)
    first_page = not (cursor or newer or page > 1)
    return render(
        request,
        "alerts/list.html",
        {
            "query": query,
            "organizations": organizations,
            "providers": providers,
            "alert_types": alert_types,
            "statuses": list(InvestigationStatus),
            "time_presets": TIME_PRESETS,
            "page_sizes": PAGE_SIZES,
            # New alerts belong at the top only of the newest-first view's first page; elsewhere a bar offers them.
            "prepend_new": keyset and first_page,
            "first_url": None if first_page else f"/alerts?{urlencode(query.params())}",
            **_pager(query, window, page, has_next),
            **rows,
        },
    )


@router.get("/alerts/live")
def alert_rows_live(
    request: Request,
    identity: IdentityDep,
    db: DbDep,
    query: ListQueryDep,
    a: Annotated[list[str] | None, Query()] = None,
    since: str = "",
) -> Response:
    """Poll target of the Alerts page: changed rows (swapped in by id), alerts newer than `since` that match the
    page's filters (prepended to the page's new-alerts section), and the next poller."""
    seen: dict[uuid.UUID, str] = {}
    for item in (a or [])[:MAX_LIVE_ROWS]:
        text, _, version = item.partition(":")
        try:
            seen[uuid.UUID(text)] = version
        except ValueError:
            continue
    arrived: list[Alert] = []
    feed: dict[str, str] | None = None
    with db.read() as session:
        watched = service.alerts_by_uuid(session, identity.principal, seen.keys())
        changed = [alert for alert in watched if row_version(alert) != seen[alert.alert_uuid]]
        filters = query.filters(epoch_now())
        if since and not query.errors:
            try:
                last = decode_cursor(since)
                arrived = queue.newer_than(session, identity.principal, filters, last)
                last = max([last, *(alert.id for alert in arrived)])
                feed = {**query.filter_params(), "since": encode_cursor(last)}
            except VigilError:
                feed = None  # an altered URL or a revoked organization: stop following new alerts
        arrived.reverse()  # newest at the top
        context = _rows_context(session, identity, [*arrived, *watched], feed)
    context["changed"] = changed
    context["arrived"] = arrived
    return render(request, "alerts/live.html", context)


def _detail_context(
    request: Request, identity: ConsoleIdentity, db: DbDep, alert_ref: str, **extra: object
) -> dict[str, object]:
    with db.read() as session:
        try:
            alert = service.get_alert(session, identity.principal, alert_ref)
        except Forbidden as error:
            # Another tenant's alert looks exactly like a missing one in the console.
            raise NotFound(f"No alert {alert_ref}.", code="alert_not_found") from error
        investigation = investigations.alert_investigation(session, alert)
        timeline = service.alert_timeline(session, alert)
        report = alert_report(session, identity.principal, alert, investigation)
    steps = sum(len(record.steps) for record in investigation.attempts)
    return {
        "alert": alert,
        "investigation": investigation,
        **report,
        "timeline": timeline,
        "pending": service.is_investigation_pending(alert),
        "version": f"{row_version(alert)}.{steps}",
        "notice": NOTICES.get(request.query_params.get("notice", "")),
        "max_type_length": MAX_ALERT_TYPE_LENGTH,
        "entity_labels": {kind.value: label for kind, label in ENTITY_LABELS.items()},
        **extra,
    }


@router.get("/alerts/{alert_ref}")
def alert_detail(request: Request, identity: IdentityDep, db: DbDep, alert_ref: str) -> Response:
    return render(request, "alerts/detail.html", _detail_context(request, identity, db, alert_ref))


@router.get("/alerts/{alert_ref}/live")
def alert_detail_live(request: Request, identity: IdentityDep, db: DbDep, alert_ref: str, v: str = "") -> Response:
    """Poll target of the detail page: 204 while nothing changed, else the page (HTMX selects the live part)."""
    context = _detail_context(request, identity, db, alert_ref)
    if context["version"] == v:
        return Response(status_code=204)
    return render(request, "alerts/detail.html", context)


@router.post("/alerts/{alert_ref}/retry")
def retry_investigation(
    request: Request, identity: WriterDep, db: DbDep, engine: EngineDep, alert_ref: str
) -> Response:
    """Re-run a Failed investigation: the same flow as POST /serviceapi/alerts/{ref}/retry."""
    try:
        alert = flows.retry_investigation(db, engine, identity.principal, alert_ref)
    except Forbidden as error:
        raise NotFound(f"No alert {alert_ref}.", code="alert_not_found") from error
    except Conflict as error:
        context = _detail_context(request, identity, db, alert_ref, action_error=error.message)
        return render(request, "alerts/detail.html", context, status_code=error.status_code)
    return RedirectResponse(f"/alerts/{alert.alert_id}?notice=retried", status_code=303)


@router.post("/alerts/{alert_ref}/type")
def set_alert_type(
    request: Request,
    identity: WriterDep,
    db: DbDep,
    engine: EngineDep,
    alert_ref: str,
    alert_type: Annotated[str, Form()] = "",
) -> Response:
    """Give an untyped alert its type; it moves Created → Submitted and is queued like a retry."""
    try:
        alert = flows.set_alert_type(db, engine, identity.principal, alert_ref, alert_type)
    except Forbidden as error:
        raise NotFound(f"No alert {alert_ref}.", code="alert_not_found") from error
    except ValidationFailed as error:
        value = alert_type[: MAX_ALERT_TYPE_LENGTH * 2]
        context = _detail_context(request, identity, db, alert_ref, type_error=error.message, type_value=value)
        return render(request, "alerts/detail.html", context, status_code=error.status_code)
    except Conflict as error:
        context = _detail_context(request, identity, db, alert_ref, action_error=error.message)
        return render(request, "alerts/detail.html", context, status_code=error.status_code)
    return RedirectResponse(f"/alerts/{alert.alert_id}?notice=submitted", status_code=303)
