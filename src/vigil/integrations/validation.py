"""Connection field values: merge an update over stored values and validate them against the integration's
declared fields (``ConnectionField.problem``), including an integration's choice of auth method, the outbound-URL
policy for URL/host fields, and the rule that a new destination needs its secrets entered again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from vigil.errors import ValidationFailed
from vigil.integrations.catalog import all_integrations, get_integration
from vigil.integrations.errors import UnknownIntegrationError
from vigil.integrations.framework import Integration
from vigil.integrations.policy import OutboundPolicy


def resolve_integration(integration_id: str) -> Integration:
    try:
        return get_integration(integration_id.strip())
    except UnknownIntegrationError:
        valid = ", ".join(i.id for i in all_integrations())
        raise ValidationFailed(
            f"Unknown integration_id '{integration_id}'. Valid values: {valid} (GET /serviceapi/integrations).",
            code="unknown_integration",
            details=[{"field": "integration_id", "message": f"must be one of: {valid}"}],
        ) from None


@dataclass(frozen=True)
class ResolvedValues:
    auth_method: str | None
    plain: dict[str, str]
    secret: dict[str, str]


def _field_error(message: str, code: str, fields: Mapping[str, str]) -> ValidationFailed:
    return ValidationFailed(
        message, code=code, details=[{"field": f"fields.{name}", "message": text} for name, text in fields.items()]
    )


def _choose_auth_method(
    integration: Integration, requested: str | None, in_fields: str | None, current: str | None
) -> str | None:
    chooser = integration.auth_method_field
    if chooser is None:
        if requested is not None:
            raise ValidationFailed(
                f"{integration.name} has a single authentication method; omit auth_method.",
                code="invalid_auth_method",
                details=[{"field": "auth_method"}],
            )
        return None
    if requested is not None and in_fields is not None and requested.strip() != in_fields.strip():
        raise ValidationFailed(
            "auth_method and fields.auth_method disagree.",
            code="invalid_auth_method",
            details=[{"field": "auth_method"}],
        )
    field = next(f for f in integration.fields if f.name == chooser)
    chosen = (requested or in_fields or current or field.default or "").strip() or None
    problem = field.problem(chosen)
    if problem is not None:
        raise ValidationFailed(
            problem, code="invalid_auth_method", details=[{"field": "auth_method", "message": problem}]
        )
    return chosen


def resolve_values(
    integration: Integration,
    updates: Mapping[str, str | None],
    *,
    auth_method: str | None,
    current: Mapping[str, str] | None = None,
    current_auth_method: str | None = None,
    policy: OutboundPolicy,
) -> ResolvedValues:
    """Merge ``updates`` over ``current`` (None = creating) and validate with each field's ``problem()``."""
    declared = {f.name: f for f in integration.fields}
    unknown = sorted(set(updates) - set(declared))
    if unknown:
        valid = ", ".join(declared)
        raise _field_error(
            f"Unknown connection field(s) for {integration.id}: {', '.join(unknown)}. Valid: {valid}.",
            "unknown_connection_field",
            {name: f"not a field of {integration.id}" for name in unknown},
        )
    chooser = integration.auth_method_field
    chosen = _choose_auth_method(
        integration, auth_method, updates.get(chooser) if chooser else None, current_auth_method
    )
    merged = dict(current or {})
    for name, value in updates.items():
        if name == chooser:
            continue
        text = (value or "").strip()
        if text:
            merged[name] = text
        elif value is None or not (declared[name].secret and current is not None):
            merged.pop(name, None)  # an empty secret in a PATCH keeps the stored one (console forms send "")
    not_used = {
        name: f"not used with auth method {chosen}"
        for name, value in updates.items()
        if (value or "").strip() and not declared[name].applies_to(chosen)
    }
    if not_used:
        raise _field_error(
            f"Field(s) {', '.join(sorted(not_used))} are not used with auth method {chosen}.",
            "field_not_used_with_auth_method",
            not_used,
        )
    merged = {name: value for name, value in merged.items() if declared[name].applies_to(chosen)}
    problems = integration.validate_values({**merged, **({chooser: chosen} if chooser and chosen else {})})
    if problems:
        raise _field_error(
            "Invalid connection fields: " + " ".join(problems.values()), "invalid_connection_fields", problems
        )
    _check_destinations(integration, updates, merged, policy)
    if current is not None:
        _require_secrets_for_new_destination(integration, updates, merged, current, chosen)
    return ResolvedValues(
        auth_method=chosen,
        plain={k: v for k, v in merged.items() if not declared[k].secret},
        secret={k: v for k, v in merged.items() if declared[k].secret},
    )


def _check_destinations(
    integration: Integration, updates: Mapping[str, str | None], merged: Mapping[str, str], policy: OutboundPolicy
) -> None:
    """Entered URL/host values must pass the outbound-URL policy (names are resolved and checked again on use)."""
    refused: dict[str, str] = {}
    for field in integration.fields:
        value = merged.get(field.name)
        if field.is_destination and value and (updates.get(field.name) or "").strip():
            problem = policy.problem(field.destination_url(value))
            if problem is not None:
                refused[field.name] = f"{field.label} {problem}."
    if refused:
        raise _field_error("Destination not allowed: " + " ".join(refused.values()), "destination_refused", refused)


def _require_secrets_for_new_destination(
    integration: Integration,
    updates: Mapping[str, str | None],
    merged: Mapping[str, str],
    current: Mapping[str, str],
    auth_method: str | None,
) -> None:
    """Changing where requests go without typing the secrets again would send the stored ones to the new host
    (a way to exfiltrate them), so, as GitHub and Grafana do, every secret must be re-entered with the change.

    A secret URL (a webhook URL) carries its own credential: entering a new one is re-entering it.
    """
    declared = {f.name: f for f in integration.fields}

    def effective(values: Mapping[str, str], name: str) -> str:
        return (values.get(name) or declared[name].default or "").strip().rstrip("/").lower()

    moved = [
        f
        for f in integration.fields_for(auth_method)
        if f.is_destination and not f.secret and effective(merged, f.name) != effective(current, f.name)
    ]
    if not moved:
        return
    missing = {
        f.name: f"Re-enter {f.label}: {', '.join(m.label for m in moved)} changed."
        for f in integration.fields_for(auth_method)
        if f.secret and not (updates.get(f.name) or "").strip()
    }
    if missing:
        labels = ", ".join(declared[name].label for name in missing)
        changed = {m.name: f"Changing {m.label} requires re-entering {labels}." for m in moved}
        raise _field_error(
            f"Changing {', '.join(m.label for m in moved)} requires re-entering {labels}: the stored secret is "
            "never sent to a new host.",
            "secret_required_for_host_change",
            {**changed, **missing},
        )
