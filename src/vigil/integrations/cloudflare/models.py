"""Cloudflare v4 records as playbooks see them; Cloudflare JSON is already snake_case except audit-log values."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from vigil.integrations.framework import VendorStrEnum, optional


class CloudflareRecord(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_by_name=True, validate_by_alias=True)


class AuditAction(CloudflareRecord):
    type: str | None = optional("Action type, e.g. change_setting or add.")
    result: bool | None = optional("Whether the action succeeded.")


class AuditActor(CloudflareRecord):
    id: str | None = optional("Actor ID.")
    email: str | None = optional("Actor email.")
    ip: str | None = optional("IP address the action came from.")
    type: str | None = optional("Actor type: user, admin or Cloudflare.")


class AuditResource(CloudflareRecord):
    id: str | None = optional("ID of the changed resource.")
    type: str | None = optional("Type of the changed resource, e.g. zone.")


class AuditOwner(CloudflareRecord):
    id: str | None = optional("ID of the account that owns the resource.")


class AuditLogEntry(CloudflareRecord):
    id: str = Field(description="Audit log entry ID (UUID).")
    action: AuditAction | None = optional("What was done and whether it succeeded.")
    actor: AuditActor | None = optional("Who did it.")
    interface: str | None = optional("Where it was done: API or UI.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free-form details, e.g. zone_name.")
    new_value: str | None = Field(default=None, validation_alias="newValue", description="Value after the change.")
    old_value: str | None = Field(default=None, validation_alias="oldValue", description="Value before the change.")
    new_value_json: dict[str, Any] | None = Field(
        default=None, validation_alias="newValueJson", description="Value after the change, as JSON."
    )
    old_value_json: dict[str, Any] | None = Field(
        default=None, validation_alias="oldValueJson", description="Value before the change, as JSON."
    )
    owner: AuditOwner | None = optional("Owner of the changed resource.")
    resource: AuditResource | None = optional("The changed resource.")
    when: str | None = optional("When it happened (ISO 8601 UTC).")


class InsightSeverity(VendorStrEnum):
    LOW = "low"
    MODERATE = "moderate"
    CRITICAL = "critical"


class Insight(CloudflareRecord):
    id: str = Field(description="Insight (issue) ID.")
    issue_class: str | None = optional("Specific problem, e.g. always_use_https_not_enabled.")
    issue_type: str | None = optional("Category, e.g. insecure_configuration or exposed_infrastructure.")
    severity: str | None = optional("Low, Moderate or Critical.")
    subject: str | None = optional("What the insight is about, e.g. a zone name.")
    dismissed: bool | None = optional("Whether the insight was dismissed.")
    status: str | None = optional("active or resolved.")
    since: str | None = optional("When the issue was first detected.")
    timestamp: str | None = optional("When the insight was last updated.")
    resolve_link: str | None = optional("Dashboard link where it can be fixed.")
    resolve_text: str | None = optional("How to fix it.")
    payload: dict[str, Any] = Field(default_factory=dict, description="Detection details, e.g. zone_tag.")


class AccessApplication(CloudflareRecord):
    id: str = Field(description="Access application ID (UUID).")
    name: str | None = optional("Application name.")
    domain: str | None = optional("Primary domain and path protected by Access.")
    type: str | None = optional("self_hosted, saas, ssh, vnc, app_launcher, warp, biso, bookmark or dash_sso.")
    aud: str | None = optional("Audience tag of the application.")
    session_duration: str | None = optional("How long an Access session lasts, e.g. 24h.")
    self_hosted_domains: list[str] = Field(default_factory=list, description="All domains of the application.")
    allowed_idps: list[str] = Field(default_factory=list, description="Identity providers users may log in with.")
    app_launcher_visible: bool | None = optional("Whether the app shows in the App Launcher.")
    created_at: str | None = optional("Creation time.")
    updated_at: str | None = optional("Last update time.")


class ZoneAccount(CloudflareRecord):
    id: str | None = optional("Account ID.")
    name: str | None = optional("Account name.")


class ZonePlan(CloudflareRecord):
    id: str | None = optional("Plan ID.")
    name: str | None = optional("Plan name, e.g. Free Website.")


class Zone(CloudflareRecord):
    id: str = Field(description="Zone ID (32 hex characters).")
    name: str = Field(description="Domain name of the zone.")
    status: str | None = optional("initializing, pending, active or moved.")
    paused: bool | None = optional("Whether Cloudflare is paused (DNS only) for the zone.")
    type: str | None = optional("full, partial or secondary.")
    development_mode: int | None = optional("Seconds of development mode left (0 when off).")
    name_servers: list[str] = Field(default_factory=list, description="Cloudflare name servers assigned.")
    original_name_servers: list[str] | None = optional("Name servers before moving to Cloudflare.")
    original_registrar: str | None = optional("Registrar before moving to Cloudflare.")
    created_on: str | None = optional("Creation time.")
    modified_on: str | None = optional("Last modification time.")
    activated_on: str | None = optional("Activation time.")
    account: ZoneAccount | None = optional("Account owning the zone.")
    plan: ZonePlan | None = optional("Subscription plan of the zone.")


class RuleAction(VendorStrEnum):
    BLOCK = "block"
    CHALLENGE = "challenge"
    JS_CHALLENGE = "js_challenge"
    MANAGED_CHALLENGE = "managed_challenge"
    LOG = "log"
    SKIP = "skip"
    EXECUTE = "execute"
    REDIRECT = "redirect"
    REWRITE = "rewrite"
    ROUTE = "route"
    SCORE = "score"
    SERVE_ERROR = "serve_error"
    SET_CONFIG = "set_config"
    SET_CACHE_SETTINGS = "set_cache_settings"
    COMPRESS_RESPONSE = "compress_response"
    FORCE_CONNECTION_CLOSE = "force_connection_close"
    LOG_CUSTOM_FIELD = "log_custom_field"
    DDOS_DYNAMIC = "ddos_dynamic"


class RulesetPhase(VendorStrEnum):
    DDOS_L4 = "ddos_l4"
    DDOS_L7 = "ddos_l7"
    HTTP_CONFIG_SETTINGS = "http_config_settings"
    HTTP_CUSTOM_ERRORS = "http_custom_errors"
    HTTP_LOG_CUSTOM_FIELDS = "http_log_custom_fields"
    HTTP_RATELIMIT = "http_ratelimit"
    HTTP_REQUEST_CACHE_SETTINGS = "http_request_cache_settings"
    HTTP_REQUEST_DYNAMIC_REDIRECT = "http_request_dynamic_redirect"
    HTTP_REQUEST_FIREWALL_CUSTOM = "http_request_firewall_custom"
    HTTP_REQUEST_FIREWALL_MANAGED = "http_request_firewall_managed"
    HTTP_REQUEST_LATE_TRANSFORM = "http_request_late_transform"
    HTTP_REQUEST_ORIGIN = "http_request_origin"
    HTTP_REQUEST_REDIRECT = "http_request_redirect"
    HTTP_REQUEST_SANITIZE = "http_request_sanitize"
    HTTP_REQUEST_SBFM = "http_request_sbfm"
    HTTP_REQUEST_SELECT_CONFIGURATION = "http_request_select_configuration"
    HTTP_REQUEST_TRANSFORM = "http_request_transform"
    HTTP_RESPONSE_COMPRESSION = "http_response_compression"
    HTTP_RESPONSE_FIREWALL_MANAGED = "http_response_firewall_managed"
    HTTP_RESPONSE_HEADERS_TRANSFORM = "http_response_headers_transform"
    MAGIC_TRANSIT = "magic_transit"
    MAGIC_TRANSIT_IDS_MANAGED = "magic_transit_ids_managed"
    MAGIC_TRANSIT_MANAGED = "magic_transit_managed"


class RulesetRule(CloudflareRecord):
    id: str = Field(description="Rule ID (32 hex characters).")
    ref: str | None = optional("Stable reference of the rule.")
    version: str | None = optional("Rule version.")
    action: str = Field(description="What the rule does, e.g. block.")
    expression: str = Field(description="Rules language expression the rule matches.")
    description: str | None = optional("Rule description.")
    enabled: bool | None = optional("Whether the rule is enabled.")
    last_updated: str | None = optional("Last update time.")


class Ruleset(CloudflareRecord):
    id: str = Field(description="Ruleset ID.")
    name: str | None = optional("Ruleset name.")
    kind: str | None = optional("managed, custom, root or zone.")
    phase: str | None = optional("Phase the ruleset runs in.")
    version: str | None = optional("Ruleset version after the change.")
    last_updated: str | None = optional("Last update time.")
    rules: list[RulesetRule] = Field(default_factory=list, description="Rules of the ruleset.")
