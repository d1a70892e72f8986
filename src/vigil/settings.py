"""All configuration in one place, read from `VIGIL_*` environment variables (and `.env`)."""

from __future__ import annotations

import json
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class LogFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VIGIL_", env_file=".env", extra="ignore")

    data_dir: Path = Field(default=Path("./vigil-data"), description="Where SQLite files and keys live.")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default is SQLite in the data directory."
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)

    # The per-key limit stops one runaway or stolen key from starving every other sender. It sits above what one
    # `vigil serve` process ingests through E1 (about 1,000 alerts/s, docs/benchmarks.md), so it never refuses a
    # legitimate sender before the server itself would slow down; at 200/s it throttled a SIEM replaying a backlog.
    rate_limit_per_second: float = Field(default=2000.0, gt=0, description="Per-API-key sustained requests/s.")
    rate_limit_burst: int = Field(default=4000, ge=1, description="Per-API-key burst size.")
    max_body_bytes: int = Field(default=1024 * 1024, description="Largest request body for single requests.")
    max_batch_body_bytes: int = Field(default=16 * 1024 * 1024, description="Largest body for batch intake.")
    max_alert_content_bytes: int = Field(default=256 * 1024, description="Largest alert_content (UTF-8).")
    idempotency_ttl_seconds: int = Field(default=24 * 3600, ge=60)

    # A sick database must never hold a request longer than these bounds (docs/intake.md, "Timeouts and a sick
    # database"). PostgreSQL gets the statement and lock timeouts as session settings on every connection; a frozen
    # server (SIGSTOP, a hung host) answers no cancel, so the client also gives up on any one answer after
    # `db_request_timeout_seconds`. SQLite's waits are the busy timeout.
    db_connect_timeout_seconds: int = Field(
        default=5, ge=2, description="Longest wait to open a PostgreSQL connection or to get one from the pool."
    )
    db_pool_size: int = Field(default=10, ge=1)
    sqlite_busy_timeout_ms: int = Field(
        default=5_000, ge=0, description="Longest wait for SQLite's write lock (this process's and other processes')."
    )
    db_statement_timeout_ms: int = Field(
        default=5_000, ge=100, description="Longest one SQL statement may run on PostgreSQL before it is cancelled."
    )
    db_lock_timeout_ms: int = Field(
        default=3_000, ge=100, description="Longest one statement may wait for a row or table lock on PostgreSQL."
    )
    db_request_timeout_seconds: float = Field(
        default=6.0,
        gt=0,
        description="Longest a request waits for the database: one PostgreSQL answer (even from a frozen server), "
        "or E1/batch's commit; then 503 with Retry-After. Must exceed the statement timeout.",
    )
    readiness_timeout_seconds: float = Field(
        default=2.0, gt=0, description="/readyz reports not ready when the database does not answer within this."
    )

    secret_key: SecretStr | None = Field(
        default=None,
        description="Fernet key(s) encrypting connection secrets, comma-separated, first one encrypts; "
        "default: a key file <data_dir>/secret.key created on first use.",
    )
    # Outbound-URL policy for every user-entered or configured vendor URL: https only, and never a loopback,
    # private, link-local or cloud-metadata address (checked after DNS resolution and on every redirect). Hosts
    # listed here are exempt (and may use http): for an on-premises vendor proxy, and for tests' loopback fakes.
    outbound_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Hosts, IP addresses or CIDR ranges exempt from the outbound-URL policy, comma-separated or "
        "a JSON list, e.g. `127.0.0.1,10.0.0.0/8`.",
    )
    # Vendor base URLs are declared (with their public defaults) in each integration's folder; this overrides them.
    vendor_urls: dict[str, str] = Field(
        default_factory=dict,
        description="Vendor base URLs to use instead of the public ones, a JSON object keyed `<integration>.<name>` "
        '(GET /serviceapi/integrations lists them as `base_urls`), e.g. `{"<integration>.api_url": '
        '"https://eu.api.example.com"}`.',
    )

    ai_model: str = Field(
        default="builtin",
        description="`builtin` (offline rule-based analyst) or a pydantic-ai model string: `openai:<model>`, "
        "`openai-chat:<model>` (Chat Completions; vLLM, Ollama, LiteLLM), `anthropic:<model>`.",
    )
    ai_base_url: str | None = Field(
        default=None, description="Base URL of an OpenAI-compatible (or Anthropic) server, e.g. http://gpu:8000/v1."
    )
    ai_api_key: SecretStr | None = Field(
        default=None, description="Key for the model's API; default: the provider's own environment variable."
    )
    ai_request_timeout_seconds: float = Field(default=60.0, gt=0, description="Upper bound for one model request.")
    ai_max_retries: int = Field(
        default=3, ge=0, le=10, description="Re-tries of a model request after a 429, 5xx or timeout (with backoff)."
    )
    ai_retry_backoff_seconds: float = Field(
        default=2.0, ge=0, description="First wait before a model re-try (doubles; a Retry-After header wins)."
    )
    ai_max_tool_calls: int = Field(
        default=8, ge=0, le=100, description="Follow-up skill calls the model may make in one investigation."
    )
    ai_max_tokens: int = Field(
        default=200_000, ge=1000, description="Input + output tokens one investigation (or one draft) may use."
    )
    ai_max_seconds: float = Field(
        default=300.0, gt=0, description="Wall time one model conversation (draft or analysis) may take."
    )
    knowledge_disabled: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Knowledge bundles the built-in analyst runs without, comma-separated names as `vigil knowledge` "
        "lists them (e.g. `sigma,network`): each loads as empty. For measuring what a source adds "
        "(`vigil eval --ablation`).",
    )
    worker_concurrency: int = Field(default=8, ge=1, description="Investigations one process runs at once.")
    # DBOS queues are polled. At 0.2 s most of an investigation's engine overhead was waiting in the queue (p50
    # 247 ms, of which 182 ms queued); 0.05 s brings it to about 70 ms for about 4 % more of a core when idle.
    queue_poll_seconds: float = Field(default=0.05, gt=0, description="How often workers look for queued work.")
    max_auto_retries: int = Field(default=2, ge=0, description="Automatic re-runs after a transient failure.")
    retry_backoff_seconds: float = Field(default=10.0, ge=0, description="First re-run delay; doubles each time.")
    skill_retry_attempts: int = Field(default=3, ge=1, description="Tries per skill call on transient errors.")
    skill_retry_backoff_seconds: float = Field(default=1.0, ge=0, description="First in-step retry delay.")
    skill_timeout_seconds: float = Field(default=120.0, gt=0, description="Upper bound for one skill call.")
    executor_id: str | None = Field(
        default=None,
        description="A name for this process (default host + role); each start runs as <name>:<token>.",
    )
    heartbeat_seconds: float = Field(default=5.0, gt=0, description="How often a worker proves it is alive.")
    dead_worker_seconds: float = Field(default=30.0, gt=0, description="Silence after which work is taken over.")
    checkpoint_timeout_seconds: int = Field(
        default=900,
        ge=5,  # = input_types.MIN_CHECKPOINT_TIMEOUT_SECONDS (settings import nothing of Vigil)
        le=7 * 24 * 3600,
        description="How long a Chat Checkpoint waits for its answer when neither the step, the organization "
        "nor the console's service-wide setting says otherwise.",
    )
    engine_step_delay_seconds: float = Field(
        default=0.0, ge=0, description="Fault-injection only: sleep in every playbook step (crash tests)."
    )

    admin_email: str | None = Field(default=None, description="First-start admin's email (default admin@vigil.local).")
    admin_password: SecretStr | None = Field(
        default=None, description="First-start admin's password; without it a one-time password is printed once."
    )

    log_format: LogFormat = LogFormat.TEXT
    log_level: str = "INFO"

    @field_validator("outbound_allowed_hosts", "knowledge_disabled", mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        """`a,b` from the environment, or a JSON list; entries are trimmed and blanks dropped."""
        if isinstance(value, str):
            text = value.strip()
            value = json.loads(text) if text.startswith("[") else text.split(",")
        if isinstance(value, list):
            return [str(item).strip() for item in value if str(item).strip()]
        return value

    @model_validator(mode="after")
    def _client_deadline_after_server_timeout(self) -> Settings:
        """A slow statement must be cancelled by the server (the connection survives) before the client gives up
        on it (the connection is closed); a PostgreSQL connect must not outlast the bound a request relies on."""
        if self.db_request_timeout_seconds * 1000 <= self.db_statement_timeout_ms:
            raise ValueError("db_request_timeout_seconds must exceed db_statement_timeout_ms")
        if not self.is_sqlite and self.db_connect_timeout_seconds > self.db_request_timeout_seconds:
            raise ValueError("db_connect_timeout_seconds must not exceed db_request_timeout_seconds")
        return self

    @cached_property
    def resolved_database_url(self) -> str:
        """The URL SQLAlchemy connects to; `postgresql://` is routed to the psycopg 3 driver."""
        url = self.database_url or f"sqlite:///{(self.data_dir / 'vigil.db').resolve()}"
        if url.startswith("postgresql://") or url.startswith("postgres://"):
            url = "postgresql+psycopg://" + url.split("://", 1)[1]
        return url

    @property
    def is_sqlite(self) -> bool:
        return self.resolved_database_url.startswith("sqlite")

    @property
    def workflow_database_url(self) -> str:
        """DBOS state: a sibling SQLite file (so intake and workers do not contend), or the same PostgreSQL."""
        if self.is_sqlite:
            app_db = Path(self.resolved_database_url.removeprefix("sqlite:///"))
            return f"sqlite:///{app_db.with_name(app_db.stem + '-workflows.db')}"
        return self.resolved_database_url


def get_settings() -> Settings:
    return Settings()
