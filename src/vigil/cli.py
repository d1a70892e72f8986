"""The `vigil` command line: run the service, manage tenants and keys, try out intake."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import signal
import sys
import threading
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import httpx
import typer
import uvicorn
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vigil.auth import service as auth_service
from vigil.auth.schemas import Principal
from vigil.db.base import epoch_now
from vigil.db.migrate import upgrade
from vigil.db.session import Database
from vigil.errors import ValidationFailed, VigilError
from vigil.evidence.facts import FactKind
from vigil.facts import service as facts_service
from vigil.facts.schemas import FactCreate
from vigil.integrations import rotation
from vigil.integrations import service as connections
from vigil.integrations.http import OutboundClient
from vigil.integrations.schemas import ConnectionCreate, ConnectionTestOut
from vigil.integrations.secrets import EnvKeySource, SecretBox, generate_key
from vigil.integrations.validation import resolve_integration
from vigil.investigations.engine import build_engine
from vigil.knowledge.bundle import bundles
from vigil.logging_setup import configure_logging
from vigil.orgs import service as orgs_service
from vigil.settings import Settings, get_settings
from vigil.users import service as users_service
from vigil.users.schemas import Role

if TYPE_CHECKING:  # `vigil eval` imports the evaluation (the TestClient, the fakes) only when it runs
    from vigil.evaluation.heldout import HeldOut
    from vigil.evaluation.runner import EvalReport, ScenarioResult
    from vigil.evaluation.scenario import Scenario

app = typer.Typer(help="Vigil: self-hostable AI security operations.", no_args_is_help=True)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
org_app = typer.Typer(help="Organizations (tenants).", no_args_is_help=True)
provider_app = typer.Typer(help="Alert providers (source systems).", no_args_is_help=True)
apikey_app = typer.Typer(help="API keys for /serviceapi.", no_args_is_help=True)
alert_app = typer.Typer(help="Alerts.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(org_app, name="org")
app.add_typer(provider_app, name="provider")
app.add_typer(apikey_app, name="apikey")
user_app = typer.Typer(help="Console users (admins, analysts, viewers).", no_args_is_help=True)
app.add_typer(user_app, name="user")
connection_app = typer.Typer(
    help="Integration connections (vendor credentials per organization).", no_args_is_help=True
)
secrets_app = typer.Typer(help="The key that encrypts stored secrets.", no_args_is_help=True)
fact_app = typer.Typer(
    help="Organization facts (authorised scanners, VPN egress, approved tools, change windows…).", no_args_is_help=True
)
app.add_typer(alert_app, name="alert")
app.add_typer(connection_app, name="connection")
app.add_typer(secrets_app, name="secrets")
app.add_typer(fact_app, name="fact")

console = Console()
CLI_ACTOR = "cli"


@contextmanager
def _database() -> Iterator[Database]:
    """Open the configured database with the schema brought up to date, and fail readably."""
    settings = get_settings()
    database = Database(settings)
    try:
        upgrade(database.engine)
        yield database
    except VigilError as error:
        console.print(f"[red]error[/red] ({error.code}): {error.message}")
        raise typer.Exit(1) from error
    finally:
        database.dispose()


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default VIGIL_HOST or 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default VIGIL_PORT or 8000).")] = None,
) -> None:
    """Run the API and console (SQLite in ./vigil-data unless VIGIL_DATABASE_URL is set)."""
    settings = get_settings()
    _require_usable_model(settings)
    configure_logging(settings.log_format, settings.log_level)
    database = Database(settings)
    upgrade(database.engine)
    from vigil.app import create_app

    _announce(settings)
    _bootstrap_admin(settings, database)
    uvicorn.run(
        create_app(settings, database, engine=build_engine(settings, database, role="serve")),
        host=host or settings.host,
        port=port or settings.port,
        log_config=None,
        timeout_graceful_shutdown=20,
    )


@app.command()
def worker(
    worker_id: Annotated[
        str | None,
        typer.Option(
            "--id", help="Stable name; each start runs as <name>:<token> (default VIGIL_EXECUTOR_ID or <host>-worker)."
        ),
    ] = None,
) -> None:
    """Run investigations only (no HTTP). Run any number of workers against PostgreSQL, each with its own --id."""
    settings = get_settings()
    if worker_id:
        settings = settings.model_copy(update={"executor_id": worker_id})
    _require_usable_model(settings)
    configure_logging(settings.log_format, settings.log_level)
    database = Database(settings)
    upgrade(database.engine)
    engine = build_engine(settings, database, role="worker")
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.set())
    _announce(settings)
    engine.start()
    console.print(f"Worker {engine.executor_id} is taking investigations; SIGTERM or Ctrl-C stops it.")
    try:
        stopping.wait()
    finally:
        engine.stop()
        database.dispose()
    # A workflow still inside a step (a vendor call may take up to the skill timeout) is durable: the next start
    # resumes it from that step. Leave without the interpreter waiting for its thread, as `vigil serve` does
    # (uvicorn re-raises the signal once it has shut down).
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(0)


def _require_usable_model(settings: Settings, model: str | None = None) -> None:
    """Refuse to start on a model this build cannot use (`VIGIL_AI_MODEL`, or `model` with the same key and base
    URL), with the reason instead of a traceback."""
    from vigil.ai.errors import UnsupportedModelError
    from vigil.ai.factory import check_usable
    from vigil.ai.organization_model import service_choice

    if model is not None:
        settings = settings.model_copy(update={"ai_model": model})
    try:
        check_usable(service_choice(settings))
    except UnsupportedModelError as error:
        console.print(f"[red]error[/red]: {error}")
        raise typer.Exit(2) from error


def _bootstrap_admin(settings: Settings, database: Database) -> None:
    """First start: create the console admin; a generated password is printed this once and never stored."""
    password = settings.admin_password.get_secret_value() if settings.admin_password else None
    with database.write() as session:
        created = users_service.bootstrap_admin(session, settings.admin_email, password)
    if created is None:
        return
    if created.generated_password:
        console.print(
            f"Console admin created: [bold]{created.email}[/bold] with one-time password "
            f"[bold]{created.generated_password}[/bold] (shown only now; signing in with it asks you to choose "
            "your own password)."
        )
    else:
        console.print(f"Console admin created: [bold]{created.email}[/bold] (password from VIGIL_ADMIN_PASSWORD).")


def _announce(settings: Settings) -> None:
    where = "SQLite in " + str(settings.data_dir.resolve()) if settings.is_sqlite else "PostgreSQL"
    console.print(f"[bold]Vigil[/bold] starting on {where}")


@db_app.command("upgrade")
def db_upgrade() -> None:
    """Apply all database migrations (safe to run repeatedly and concurrently)."""
    with _database():
        console.print("Database schema is up to date.")


@org_app.command("add")
def org_add(
    code: Annotated[str, typer.Argument(help="2-16 characters A-Z/0-9, e.g. ACME.")],
    name: Annotated[str | None, typer.Option(help="Display name (default: the code).")] = None,
) -> None:
    """Create an organization."""
    with _database() as database, database.write() as session:
        organization = orgs_service.create_organization(session, code, name)
        console.print(f"Created organization {organization.organization_code} ({organization.organization_uuid})")


@org_app.command("list")
def org_list() -> None:
    """List organizations."""
    with _database() as database, database.read() as session:
        table = Table("CODE", "NAME", "UUID")
        for organization in orgs_service.list_organizations(session):
            table.add_row(organization.organization_code, organization.name, str(organization.organization_uuid))
        console.print(table)


@provider_app.command("add")
def provider_add(
    slug: Annotated[str, typer.Argument(help="Lowercase identifier, e.g. okta.")],
    name: Annotated[str | None, typer.Option(help="Display name.")] = None,
) -> None:
    """Add an alert provider."""
    with _database() as database, database.write() as session:
        provider = orgs_service.create_provider(session, slug, name)
        console.print(f"Added provider {provider.alert_provider}")


@provider_app.command("list")
def provider_list() -> None:
    """List enabled alert providers."""
    with _database() as database, database.read() as session:
        table = Table("ALERT_PROVIDER", "NAME")
        for provider in orgs_service.list_providers(session):
            table.add_row(provider.alert_provider, provider.name)
        console.print(table)


@apikey_app.command("create")
def apikey_create(
    name: Annotated[str, typer.Option(help="What the key is for, e.g. 'SIEM forwarder'.")],
    org: Annotated[list[str] | None, typer.Option(help="Allowed organization code; repeat. None = all.")] = None,
    expires_days: Annotated[int | None, typer.Option(help="Expire after this many days.")] = None,
) -> None:
    """Create an API key and print it once; only its hash is stored."""
    with _database() as database, database.write() as session:
        created = auth_service.create_api_key(
            session,
            name=name,
            created_by=CLI_ACTOR,
            organization_codes=org or [],
            expires_in_days=expires_days,
        )
    scope = ", ".join(created.organizations) if created.organizations else "all organizations"
    console.print(f"API key '{created.name}' for {scope} (id {created.key_uuid}). Store it now; it is not shown again:")
    typer.echo(created.api_key)


@apikey_app.command("list")
def apikey_list() -> None:
    """List API keys (prefix only)."""
    with _database() as database, database.read() as session:
        table = Table("NAME", "ORGS", "EXPIRES", "REVOKED", "LAST USED")
        table.add_column("PREFIX", no_wrap=True)
        table.add_column("ID", no_wrap=True)
        for key in auth_service.list_api_keys(session):
            table.add_row(
                key.name,
                ", ".join(key.organizations) if key.organizations else "all",
                _when(key.expires_at),
                _when(key.revoked_at),
                _when(key.last_used_at),
                key.prefix + "…",
                str(key.key_uuid),
            )
        console.print(table)


def _when(epoch: int | None) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M UTC") if epoch else "-"


@apikey_app.command("revoke")
def apikey_revoke(key: Annotated[str, typer.Argument(help="Key id (UUID) or visible prefix.")]) -> None:
    """Revoke an API key; requests with it get 401 from now on."""
    with _database() as database, database.write() as session:
        revoked = auth_service.revoke_api_key(session, key)
        console.print(f"Revoked {revoked.prefix}… ({revoked.name})")


@user_app.command("invite")
def user_invite(
    email: Annotated[str, typer.Option(help="Sign-in email.")],
    role: Annotated[Role, typer.Option(help="admin (all organizations), analyst or viewer.")] = Role.ANALYST,
    org: Annotated[list[str] | None, typer.Option(help="Organization the user may see; repeat.")] = None,
) -> None:
    """Create a console user and print a one-time password to pass on."""
    with _database() as database, database.write() as session:
        invited = users_service.invite_user(session, email=email, role=role, organization_codes=org or [])
    console.print(f"User {invited.email} ({invited.role.value}) created. One-time password (shown only now):")
    typer.echo(invited.one_time_password)


@user_app.command("reset-password")
def user_reset_password(email: Annotated[str, typer.Argument(help="The user's email.")]) -> None:
    """Give a user a new one-time password (for example a locked-out admin); their sessions end."""
    with _database() as database, database.write() as session:
        user = users_service.find_by_email(session, email)
        reset = users_service.reset_password(session, user.user_uuid)
    console.print(f"New one-time password for {reset.email} (shown only now):")
    typer.echo(reset.one_time_password)


@user_app.command("list")
def user_list() -> None:
    """List console users."""
    with _database() as database, database.read() as session:
        table = Table("EMAIL", "ROLE", "ORGS", "LAST SIGN-IN", "DISABLED")
        for user in users_service.list_users(session):
            orgs = "all" if user.role is Role.ADMIN else ", ".join(user.organizations) or "-"
            table.add_row(user.email, user.role.value, orgs, _when(user.last_login_at), _when(user.disabled_at))
        console.print(table)


@alert_app.command("send")
def alert_send(
    org: Annotated[str, typer.Option(help="organization_code")],
    provider: Annotated[str, typer.Option(help="alert_provider")],
    alert_type: Annotated[str | None, typer.Option("--type", help="alert_type")] = None,
    content: Annotated[str | None, typer.Option(help="alert_content; default: read --file or stdin")] = None,
    file: Annotated[Path | None, typer.Option(help="Read alert_content from this file")] = None,
    url: Annotated[str, typer.Option(help="Base URL of a running Vigil")] = "http://127.0.0.1:8000",
    api_key: Annotated[str | None, typer.Option(envvar="VIGIL_API_KEY", help="API key")] = None,
) -> None:
    """Post one alert to a running server (E1) and print the response."""
    if api_key is None:
        console.print("[red]error[/red]: pass --api-key or set VIGIL_API_KEY")
        raise typer.Exit(2)
    body_text = content if content is not None else (file.read_text() if file else sys.stdin.read())
    payload: dict[str, object] = {
        "organization_code": org,
        "alert_provider": provider,
        "alert_content": body_text,
    }
    if alert_type:
        payload["alert_type"] = alert_type
    try:
        response = httpx.post(
            f"{url.rstrip('/')}/serviceapi/alerts", json=payload, cookies={"Session": api_key}, timeout=30
        )
    except httpx.HTTPError as error:
        console.print(f"[red]error[/red]: cannot reach {url}: {error}")
        raise typer.Exit(1) from error
    typer.echo(json.dumps(response.json(), indent=2))
    if response.status_code >= 400:
        raise typer.Exit(1)


# The CLI runs on the server with database access, i.e. as operator staff: every organization.
CLI_PRINCIPAL = Principal(
    actor_uuid=uuid.UUID(int=0), name=CLI_ACTOR, all_organizations=True, organization_uuids=frozenset()
)
FIELD_ENV_PREFIX = "VIGIL_FIELD_"


def _parse_fields(pairs: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValidationFailed(f"--field takes NAME=VALUE, got '{name.strip()}…'.", code="invalid_field_option")
        values[name.strip()] = value
    return values


def _complete_secrets(integration_id: str, auth_method: str | None, values: dict[str, str]) -> None:
    """Secret fields not given with --field come from VIGIL_FIELD_<NAME>, or a hidden prompt when required."""
    integration = resolve_integration(integration_id)
    chooser = integration.auth_method_field
    method = auth_method or (values.get(chooser) if chooser else None) or integration.auth_method(values)
    for field in integration.fields_for(method):
        if not field.secret or values.get(field.name, "").strip():
            continue
        from_env = os.environ.get(FIELD_ENV_PREFIX + field.name.upper())
        if from_env:
            values[field.name] = from_env
        elif field.required:
            values[field.name] = typer.prompt(field.label, hide_input=True)


def _parse_expiry(text: str | None) -> int | None:
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    try:
        return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())
    except ValueError:
        raise ValidationFailed("--expires takes YYYY-MM-DD or epoch seconds.", code="invalid_expiry") from None


@connection_app.command("add")
def connection_add(
    org: Annotated[str, typer.Option(help="organization_code")],
    integration: Annotated[str, typer.Option(help="Integration id, as GET /serviceapi/integrations lists them.")],
    name: Annotated[str, typer.Option(help="Instance name, unique in the organization.")],
    description: Annotated[str, typer.Option(help="What this connection is for.")] = "",
    field: Annotated[
        list[str] | None,
        typer.Option(help="NAME=VALUE; repeat. Secrets left out come from VIGIL_FIELD_<NAME> or a hidden prompt."),
    ] = None,
    auth_method: Annotated[str | None, typer.Option(help="Auth method, where there are several.")] = None,
    expires: Annotated[str | None, typer.Option(help="Credential expiry, YYYY-MM-DD or epoch seconds.")] = None,
) -> None:
    """Create a connection; secret values are encrypted and never printed."""
    with _database() as database:
        values = _parse_fields(field or [])
        _complete_secrets(integration, auth_method, values)
        payload = ConnectionCreate(
            organization_code=org,
            integration_id=integration,
            name=name,
            description=description,
            auth_method=auth_method,
            fields=values,
            expires_at=_parse_expiry(expires),
        )
        box = SecretBox.from_settings(database.settings)
        with database.write() as session:
            created = connections.create_connection(session, CLI_PRINCIPAL, payload, box, created_by=CLI_ACTOR)
            console.print(
                f"Created connection '{created.name}' ({created.integration_id}, id {created.connection_uuid})"
            )


@connection_app.command("list")
def connection_list(org: Annotated[str | None, typer.Option(help="Only this organization.")] = None) -> None:
    """List connections with their last test result (secrets masked)."""
    with _database() as database, database.read() as session:
        box = SecretBox.from_settings(database.settings)
        table = Table("ORG", "NAME", "INTEGRATION", "AUTH", "EXPIRES", "LAST TEST", "ID")
        for connection, code in connections.list_connections(session, CLI_PRINCIPAL, org):
            out = connections.describe(connection, code, box)
            test = "-" if out.last_test_ok is None else ("ok" if out.last_test_ok else f"failed: {out.last_test_cause}")
            expiry = _when(out.expires_at) + (" (expired)" if out.expired else "")
            table.add_row(
                code, out.name, out.integration_id, out.auth_method or "-", expiry, test, str(out.connection_uuid)
            )
        console.print(table)


@connection_app.command("test")
def connection_test(
    name: Annotated[str, typer.Argument(help="Connection name.")],
    org: Annotated[str, typer.Option(help="organization_code")],
) -> None:
    """Authenticate/Test against the vendor; prints the cause and remedy of a failure."""
    with _database() as database:
        with database.read() as session:
            connection_uuid = connections.find_connection(session, org, name, CLI_PRINCIPAL).connection_uuid

        async def run() -> ConnectionTestOut:
            async with OutboundClient() as http:
                return await connections.run_connection_test(
                    database,
                    CLI_PRINCIPAL,
                    connection_uuid,
                    box=SecretBox.from_settings(database.settings),
                    endpoints=connections.endpoints_from_settings(database.settings),
                    http=http,
                )

        result = asyncio.run(run())
    if result.ok:
        console.print(f"[green]ok[/green] {result.detail or ''}")
        return
    console.print(f"[red]failed[/red] {result.cause}" + (f" (HTTP {result.status_code})" if result.status_code else ""))
    console.print(f"remedy: {result.remedy}")
    raise typer.Exit(1)


@connection_app.command("delete")
def connection_delete(
    name: Annotated[str, typer.Argument(help="Connection name.")],
    org: Annotated[str, typer.Option(help="organization_code")],
) -> None:
    """Delete a connection and its stored secrets."""
    with _database() as database, database.write() as session:
        connection = connections.find_connection(session, org, name, CLI_PRINCIPAL)
        connections.delete_connection(session, CLI_PRINCIPAL, connection.connection_uuid)
        console.print(f"Deleted connection '{name}'")


@fact_app.command("add")
def fact_add(
    org: Annotated[str, typer.Option(help="organization_code")],
    kind: Annotated[FactKind, typer.Option(help="What the fact says.")],
    value: Annotated[str, typer.Option(help="IP/CIDR (network kinds), tool name, change reference or account.")],
    reason: Annotated[str, typer.Option(help="Why it is true (cited with it).")],
    owner: Annotated[str, typer.Option(help="E-mail of whoever vouches for it.")],
    expires: Annotated[str, typer.Option(help="YYYY-MM-DD (UTC); at most two years ahead.")],
    scope: Annotated[str | None, typer.Option(help="Where it holds, in words.")] = None,
    window_start: Annotated[str | None, typer.Option(help="change_window: ISO 8601 start (UTC).")] = None,
    window_end: Annotated[str | None, typer.Option(help="change_window: ISO 8601 end (UTC).")] = None,
) -> None:
    """Record an organization fact; it counts until it expires or is revoked."""
    with _database() as database:
        fields = {
            "kind": kind,
            "value": value,
            "reason": reason,
            "owner": owner,
            "scope": scope,
            "expires_at": expires,
            "window_start": window_start,
            "window_end": window_end,
        }
        payload = FactCreate.from_fields(fields)
        with database.write() as session:
            organization, fact = facts_service.create_fact(session, CLI_PRINCIPAL, org, payload, actor=CLI_ACTOR)
            console.print(
                f"Recorded {fact.kind} {escape(fact.value)} for {organization.organization_code} "
                f"until {_when(fact.expires_at)} (id {fact.fact_uuid})",
                soft_wrap=True,
            )


@fact_app.command("list")
def fact_list(
    org: Annotated[str, typer.Option(help="organization_code")],
    show_all: Annotated[bool, typer.Option("--all", help="Also expired and revoked facts.")] = False,
) -> None:
    """List an organization's active facts (with --all, the expired and revoked ones too)."""
    with _database() as database, database.read() as session:
        _, facts = facts_service.list_facts(session, CLI_PRINCIPAL, org, active=None if show_all else True)
        table = Table("KIND", "VALUE", "SCOPE", "OWNER", "EXPIRES", "STATUS", "REASON")
        table.add_column("ID", no_wrap=True)
        for fact in facts:
            table.add_row(
                fact.kind,
                escape(fact.value),
                escape(fact.scope or "-"),
                fact.owner,
                _when(fact.expires_at),
                facts_service.status_of(fact, epoch_now()).value,
                escape(fact.reason),
                str(fact.fact_uuid),
            )
        # Measured now, not at import: a pipe gets a wide table (160 columns), a terminal its own width.
        Console(width=shutil.get_terminal_size((160, 24)).columns).print(table)


@fact_app.command("revoke")
def fact_revoke(fact_id: Annotated[str, typer.Argument(help="The fact's id (UUID), as `fact list` shows it.")]) -> None:
    """Revoke a fact: the analyst stops reading it at once; it stays listed (--all) as revoked."""
    with _database() as database, database.write() as session:
        organization, fact = facts_service.revoke_fact(session, CLI_PRINCIPAL, fact_id, actor=CLI_ACTOR)
        console.print(f"Revoked {fact.kind} {escape(fact.value)} of {organization.organization_code}")


@secrets_app.command("generate-key")
def secrets_generate_key() -> None:
    """Print a new random key for VIGIL_SECRET_KEY."""
    typer.echo(generate_key())


@app.command("knowledge")
def knowledge_list(
    as_json: Annotated[bool, typer.Option("--json", help="Print the provenance records as JSON.")] = False,
) -> None:
    """List the public knowledge bundles the built-in analyst carries: source, pinned commit, date, licence, counts;
    a bundle VIGIL_KNOWLEDGE_DISABLED switches off is marked disabled."""
    shipped = bundles()
    disabled = {name.lower() for name in get_settings().knowledge_disabled}
    unknown = sorted(disabled - {bundle.name for bundle in shipped})
    if unknown:
        typer.echo(
            f"error: VIGIL_KNOWLEDGE_DISABLED names no bundle {', '.join(unknown)} "
            f"(there are: {', '.join(bundle.name for bundle in shipped)}); the engine refuses to start with it.",
            err=True,
        )
    if as_json:
        listed = [bundle.model_dump(mode="json") | {"disabled": bundle.name in disabled} for bundle in shipped]
        typer.echo(json.dumps(listed, indent=2))
        return
    # One block per bundle, never a table: sources and counts stay whole in a pipe or a narrow terminal.
    for bundle in shipped:
        licence = f"{bundle.licence} ({bundle.licence_file})" if bundle.licence_file else bundle.licence
        state = " [disabled: VIGIL_KNOWLEDGE_DISABLED, loads as empty]" if bundle.name in disabled else ""
        typer.echo(f"{bundle.name} - {bundle.title}{state}")
        typer.echo(f"  source   {bundle.source} @ {bundle.commit[:12]} ({bundle.date})")
        typer.echo(f"  licence  {licence}")
        typer.echo(f"  counts   {bundle.counts_text()}\n")


@secrets_app.command("rotate")
def secrets_rotate() -> None:
    """Re-encrypt every stored secret under a new key, then drop the old one (docs/integrations.md)."""
    with _database() as database:
        box = SecretBox.from_settings(database.settings)
        if isinstance(box.source, EnvKeySource):
            if len(box.source.keys()) < 2:
                console.print(
                    "VIGIL_SECRET_KEY holds one key. To rotate: set VIGIL_SECRET_KEY=<new>,<old> on every process "
                    "(new key below), restart them, run `vigil secrets rotate` again, then set VIGIL_SECRET_KEY=<new>."
                )
                typer.echo(generate_key())
                raise typer.Exit(1)
            count = rotation.reencrypt_all(database, box)
            stale = rotation.stale_connections(database, box)
            if stale:
                count = rotation.reencrypt_all(database, box)
            console.print(
                f"Re-encrypted {count} connection(s) under the first key of VIGIL_SECRET_KEY. "
                "Now remove the old key(s) from VIGIL_SECRET_KEY everywhere and restart."
            )
            return
        count = rotation.rotate_key_file(database, box, generate_key())
        console.print(f"Rotated the key in {box.source.description}; re-encrypted {count} connection(s).")


# --- evaluation ---------------------------------------------------------------------------------------------


def _eval_sets(set_dir: Path | None, holdout_dirs: list[Path]) -> tuple[Path, list[Path]]:
    """The folder of scenario files (the set shipped with the package, or ``--set``, a directory of the user's own
    scenarios) and the held-out folders (each ``--holdout``, else the set's ``holdout/`` when present; the
    shipped set has none, so plain `vigil eval` runs no held-out scenario). Exits 2 when a given folder is not a
    directory."""
    from vigil.evaluation.scenario import HOLDOUT, SCENARIOS_DIR

    folder = SCENARIOS_DIR if set_dir is None else _eval_dir("--set", set_dir)
    if holdout_dirs:
        return folder, [_eval_dir("--holdout", given) for given in holdout_dirs]
    return folder, [folder / HOLDOUT] if (folder / HOLDOUT).is_dir() else []


def _eval_dir(option: str, given: Path) -> Path:
    folder = given.expanduser().resolve()
    if not folder.is_dir():
        console.print(f"[red]error[/red]: {option} {given}: no such directory (it holds the scenario JSON files).")
        raise typer.Exit(2)
    return folder


def _redacted(url: str) -> str:
    """A database URL without its password, for the report."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def _load_set(folder: Path, fast: bool = False) -> list[Scenario]:
    """The folder's scenarios (``--fast``: the marked subset); exits 2 on an invalid file."""
    from vigil.evaluation.scenario import load_scenarios

    try:
        return load_scenarios(folder, fast_only=fast)
    except ValueError as error:
        console.print(f"[red]error[/red]: invalid scenario in {folder}: {error}", highlight=False)
        raise typer.Exit(2) from error


def _select_scenarios(folder: Path, fast: bool, wanted: list[str]) -> list[Scenario]:
    """The set's scenarios (``--fast`` subset), narrowed to ``--scenario`` ids; exits 2 on a bad set or id."""
    scenarios = _load_set(folder, fast)
    unknown = [name for name in wanted if name not in {s.id for s in scenarios}]
    if unknown:
        subset = " among the fast scenarios" if fast else ""
        console.print(f"[red]error[/red]: no scenario {', '.join(unknown)} in {folder}{subset}")
        raise typer.Exit(2)
    if wanted:
        scenarios = [s for s in scenarios if s.id in set(wanted)]
    if not scenarios:
        console.print(f"[red]error[/red]: the set has no scenarios to run (no NN-<id>.json file in {folder}).")
        raise typer.Exit(2)
    return scenarios


def _eval_command_line(
    set_dir: Path | None,
    fast: bool,
    database_url: str | None,
    model: str | None,
    output: str,
    wanted: list[str],
    timeout: float | None = None,
    holdout_dirs: list[Path] | None = None,
    holdout_details: bool = False,
    ablation: bool = False,
) -> str:
    """The command as the report shows it (the database password redacted)."""
    command = ["vigil", "eval"]
    if set_dir is not None:
        command += ["--set", str(set_dir)]
    for holdout_dir in holdout_dirs or []:
        command += ["--holdout", str(holdout_dir)]
    if holdout_details:
        command.append("--holdout-details")
    if ablation:
        command.append("--ablation")
    if fast:
        command.append("--fast")
    if database_url:
        command += ["--database-url", _redacted(database_url)]
    if model:
        command += ["--model", model]
    if timeout is not None:
        command += ["--timeout", f"{timeout:g}"]
    for name in wanted:
        command += ["--scenario", name]
    if output != "docs/evaluation.md":
        command += ["--output", output]
    return " ".join(command)


def _print_eval_progress(result: ScenarioResult) -> None:
    mark = "[green]pass[/green]" if result.passed else "[red]FAIL[/red]"
    detail = "" if result.passed else ": " + "; ".join(result.failures)
    run = result.run
    usage = ""
    if run.usage.model_requests or run.usage.tool_calls:
        usage = (
            f", {run.usage.input_tokens:,}+{run.usage.output_tokens:,} tokens, "
            f"{run.usage.model_requests} requests, {run.usage.tool_calls} tool calls"
        )
    if run.fallback_reason:
        usage += f", verdict by the built-in analyst: {run.fallback_reason}"
    if run.draft_fallback_reason:
        usage += f", playbook by the built-in analyst: {run.draft_fallback_reason}"
    text = escape(f"{result.id} ({result.category}, {run.seconds:.1f} s{usage}){detail}")
    console.print(f"  {mark} {text}", highlight=False)


def _print_eval_tables(evaluated: EvalReport) -> None:
    from vigil.evaluation import report

    console.print(report.rich_table(evaluated))
    if not evaluated.uses_builtin:
        console.print(report.usage_table(evaluated))
        for line in report.usage_lines(evaluated):
            console.print(line, highlight=False, markup=False)


def _run_held_out(
    batches: list[tuple[Path, list[Scenario]]],
    database_url: str | None,
    model: str,
    timeout: float | None,
    details: bool,
    ablation: bool,
) -> HeldOut | None:
    """Each held-out folder as a batch (then, with ``ablation``, all of them once per bundle switched off); each
    scenario's line only with ``details``."""
    from vigil.evaluation import report
    from vigil.evaluation.heldout import AblationPass, HeldOut, HeldOutBatch, batch_name, run_ablation, shown_folder
    from vigil.evaluation.runner import run_evaluation

    runs = []
    for index, (folder, held) in enumerate(batches):
        if not held:
            continue
        name = batch_name(index)
        console.print(f"Running {len(held)} held-out scenario(s) of {name} (reported apart, never used for tuning)…")
        evaluated = run_evaluation(
            held,
            database_url=database_url,
            model=model,
            scenario_timeout=timeout,
            progress=_print_eval_progress if details else None,
        )
        _print_eval_tables(evaluated)
        runs.append(HeldOutBatch(name=name, folder=shown_folder(folder), report=evaluated))
    if not runs:
        return None
    held_out = HeldOut(batches=runs, details=details)
    if len(runs) > 1:
        console.print(report.rich_table(held_out.combined))
    if ablation:

        def announce(run: AblationPass) -> None:
            console.print(f"  knowledge {run.label}: held-out disposition {run.disposition.text()}", highlight=False)

        console.print("Knowledge ablation: the held-out scenarios once per bundle switched off…")
        everything = [scenario for _, held in batches for scenario in held]
        held_out.ablation = run_ablation(
            everything, database_url=database_url, model=model, scenario_timeout=timeout, progress=announce
        )
    return held_out


@app.command("eval")
def eval_command(
    set_dir: Annotated[
        Path | None,
        typer.Option(
            "--set",
            help="A directory of your own scenario files (NN-<id>.json, the format of the shipped set; held-out "
            "ones in its holdout/). Default: the labelled set shipped with Vigil.",
        ),
    ] = None,
    fast: Annotated[bool, typer.Option("--fast", help="Only the scenarios marked fast (the CI subset).")] = False,
    database_url: Annotated[
        str | None, typer.Option("--database-url", help="Database to run on (default: SQLite in a temp dir).")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Investigator model (default VIGIL_AI_MODEL): builtin, openai:…, openai-chat:…, anthropic:…; "
            "key, base URL and limits from VIGIL_AI_* as for `vigil serve`."
        ),
    ] = None,
    output: Annotated[
        str,
        typer.Option(
            help="Markdown report path (its folder is created); '-' prints it instead. A model's run replaces only "
            "its own section of the file, the built-in analyst's only the part before the model sections."
        ),
    ] = "docs/evaluation.md",
    scenario: Annotated[
        list[str] | None, typer.Option("--scenario", help="Run only this scenario id (repeatable).")
    ] = None,
    holdout: Annotated[
        list[Path] | None,
        typer.Option(
            "--holdout",
            help="A folder of held-out scenarios to run after the set and report apart (repeatable: each folder is a "
            "batch, 'batch 1', 'batch 2', … in the order given; full runs only; never gates). Default: <set>/holdout/ "
            "when it exists (the shipped set has none). The project's frozen held-out sets are tests/eval/holdout/ "
            "and tests/eval/holdout2/ of a checkout.",
        ),
    ] = None,
    holdout_details: Annotated[
        bool,
        typer.Option(
            "--holdout-details",
            help="Also print and write each held-out scenario's result and reasons (default: totals, rates and "
            "the confusion matrix only, so nobody tunes on them).",
        ),
    ] = False,
    ablation: Annotated[
        bool,
        typer.Option(
            "--ablation",
            help="Run the held-out scenarios again once per knowledge bundle switched off (and all on), and write "
            "the 'Knowledge ablation' table: held-out disposition accuracy without each source.",
        ),
    ] = False,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds one investigation may take (default 60; with a model 2 × VIGIL_AI_MAX_SECONDS + 60).",
            min=1,
        ),
    ] = None,
) -> None:
    """Run the labelled scenario set end to end (API, engine, vendor fakes) and write the accuracy report.

    With a model, the report adds tokens, model requests, tool calls, cost and time per investigation and the
    fallbacks to the built-in analyst, written beside the built-in analyst's report. The alerts and evidence
    go to the model's provider.

    Exits 1 when the totals miss the acceptance thresholds (disposition and severity 90 %, entities and
    injection 100 %), 2 when the set, a scenario id or the model is not found or a scenario file is invalid.
    """
    from vigil.ai.factory import is_builtin

    # The runner drives the app through Starlette's TestClient, which warns about its httpx backend.
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from vigil.evaluation import report
    from vigil.evaluation.runner import run_evaluation

    settings = get_settings()
    chosen_model = model or settings.ai_model
    _require_usable_model(settings, chosen_model)  # with the key and base URL the runner's engine will see
    configure_logging(settings.log_format, "WARNING")
    folder, holdout_dirs = _eval_sets(set_dir, holdout or [])
    scenarios = _select_scenarios(folder, fast, scenario or [])
    full_run = not fast and not scenario
    batches = [(given, _load_set(given)) for given in holdout_dirs] if full_run else []
    if ablation and not any(held for _, held in batches):
        console.print("[red]error[/red]: --ablation runs the held-out scenarios: give --holdout DIR (a full run).")
        raise typer.Exit(2)
    console.print(f"Running {len(scenarios)} scenario(s) with investigator [bold]{chosen_model}[/bold]…")
    if not is_builtin(chosen_model):
        base_url = settings.ai_base_url
        where = f"the server at {_redacted(base_url)}" if base_url else f"{chosen_model}'s provider"
        console.print(f"The scenarios' alerts and evidence go to {where}.", highlight=False, markup=False)
    evaluated = run_evaluation(
        scenarios,
        database_url=database_url,
        model=chosen_model,
        scenario_timeout=timeout,
        progress=_print_eval_progress,
    )
    _print_eval_tables(evaluated)
    if evaluated.injection_pct is not None:
        count = len(evaluated.injection_results)
        console.print(f"Injection checks: {evaluated.injection_pct:.0f} % of {count} scenario(s)")
    held_out = _run_held_out(batches, database_url, chosen_model, timeout, holdout_details, ablation)
    command = _eval_command_line(
        set_dir, fast, database_url, model, output, scenario or [], timeout, holdout, holdout_details, ablation
    )
    if output == "-":
        typer.echo(report.render_markdown(evaluated, command, holdout=held_out))
    else:
        target = Path(output)
        report.write_markdown(evaluated, target, command, holdout=held_out)
        part = "the built-in analyst's report" if evaluated.uses_builtin else f"the section of {chosen_model}"
        console.print(f"Wrote {part} to {target} (its other parts kept)")
    shortfalls = evaluated.shortfalls()
    if shortfalls:
        console.print("[red]Below the acceptance thresholds:[/red] " + "; ".join(shortfalls))
        raise typer.Exit(1)
    console.print(f"[green]Accepted[/green] in {evaluated.seconds:.0f} s.")
