"""All configuration in one place, read from `VIGIL_*` environment variables (and `.env`)."""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property
from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


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

    rate_limit_per_second: float = Field(default=200.0, gt=0, description="Per-API-key sustained rate.")
    rate_limit_burst: int = Field(default=400, ge=1, description="Per-API-key burst size.")
    max_body_bytes: int = Field(default=1024 * 1024, description="Largest request body for single requests.")
    max_batch_body_bytes: int = Field(default=16 * 1024 * 1024, description="Largest body for batch intake.")
    max_alert_content_bytes: int = Field(default=256 * 1024, description="Largest alert_content (UTF-8).")
    idempotency_ttl_seconds: int = Field(default=24 * 3600, ge=60)

    db_connect_timeout_seconds: int = Field(default=5, ge=1)
    db_pool_size: int = Field(default=10, ge=1)
    sqlite_busy_timeout_ms: int = Field(default=10_000, ge=0)

    secret_key: SecretStr | None = Field(
        default=None,
        description="Fernet key(s) encrypting connection secrets, comma-separated, first one encrypts; "
        "default: a key file <data_dir>/secret.key created on first use.",
    )
    # Vendor base URLs (defaults = vigil.integrations.framework.Endpoints); tests point them at loopback fakes.
    mde_auth_url: str = "https://login.microsoftonline.com"
    mde_api_url: str = "https://api.securitycenter.microsoft.com"
    edge_api_url: str = "https://api.cloudflare.com"
    chat_api_url: str = "https://slack.com/api"

    log_format: LogFormat = LogFormat.TEXT
    log_level: str = "INFO"

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


def get_settings() -> Settings:
    return Settings()
