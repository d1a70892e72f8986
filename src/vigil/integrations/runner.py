"""Run a skill from untyped playbook/LLM inputs, and test a connection without ever raising for vendor failures.

These two are where vendor text leaves the integrations layer for the rest of Vigil (step records, evidence,
connection test results, logs), so both pass everything they return or raise through the connection's redactor.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from vigil.integrations.catalog import get_integration, get_skill
from vigil.integrations.errors import UNEXPECTED_RESPONSE, IntegrationError
from vigil.integrations.framework import ConnectionTestResult, Integration, SkillContext
from vigil.integrations.redaction import Redactor

logger = logging.getLogger("vigil.integrations.runner")

_STRUCTURED_TYPE_ERRORS = frozenset({"list_type", "dict_type", "model_type", "model_attributes_type", "tuple_type"})


def _drop_blank_optionals(model: type[BaseModel], raw: Mapping[str, object]) -> dict[str, object]:
    """Template engines render unset values as "", which for an optional field means "not given"."""
    cleaned: dict[str, object] = {}
    for key, value in raw.items():
        info = model.model_fields.get(key)
        if info is not None and not info.is_required() and isinstance(value, str) and not value.strip():
            continue
        cleaned[key] = value
    return cleaned


def _decode_json_strings(raw: dict[str, object], error: ValidationError) -> dict[str, object] | None:
    """Templates can only produce strings; a list/object field given a JSON string is decoded once."""
    decoded = dict(raw)
    changed = False
    for item in error.errors():
        loc = item["loc"]
        if item["type"] not in _STRUCTURED_TYPE_ERRORS or len(loc) != 1:
            continue
        value = decoded.get(str(loc[0]))
        if isinstance(value, str):
            try:
                decoded[str(loc[0])] = json.loads(value)
            except ValueError:
                continue
            changed = True
    return decoded if changed else None


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_input=False, include_url=False):
        where = ".".join(str(p) for p in item["loc"]) or "input"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


def validate_inputs(model: type[BaseModel], raw_inputs: Mapping[str, object]) -> BaseModel:
    """Coerce template strings into the skill's input model ("5" -> 5, "" -> unset, JSON text -> list/object)."""
    raw = _drop_blank_optionals(model, raw_inputs)
    try:
        return model.model_validate(raw)
    except ValidationError as first:
        retry = _decode_json_strings(raw, first)
        try:
            if retry is None:
                raise first from None
            return model.model_validate(retry)
        except ValidationError as error:
            raise IntegrationError(
                "invalid_skill_input",
                f"Invalid skill input: {_describe(error)}",
                cause="Invalid skill input",
                remedy="Fix the skill's inputs in the playbook step.",
            ) from None


def _redactor(integration: Integration, ctx: SkillContext) -> Redactor:
    """The context's redactor, taught the connection's secret values here, the one place vendor text leaves."""
    for name in integration.secret_field_names():
        ctx.redactor.add(ctx.values.get(name))
    return ctx.redactor


def _redacted(error: IntegrationError, redactor: Redactor) -> IntegrationError:
    return IntegrationError(
        error.code,
        redactor.redact(error.message),
        cause=redactor.redact_optional(error.cause),
        remedy=redactor.redact_optional(error.remedy),
        transient=error.transient,
        status_code=error.status_code,
    )


async def run_skill(skill_id: str, ctx: SkillContext, raw_inputs: Mapping[str, object]) -> dict[str, object]:
    """Validate inputs, run the skill and return its output as JSON-ready data (field names as keys)."""
    declared = get_skill(skill_id)
    params = validate_inputs(declared.input_model, raw_inputs)
    return await run_vendor_call(declared.integration_id, ctx, lambda: declared.func(ctx, params))


async def run_vendor_call(
    integration_id: str, ctx: SkillContext, call: Callable[[], Awaitable[BaseModel]]
) -> dict[str, object]:
    """Run one call to the vendor (a skill, a chat question) and return its result as JSON-ready data, failures and
    output passed through the connection's redactor.

    Vendor data that does not fit the expected records is an ``unexpected_response`` error that names the fields,
    never their values.
    """
    integration = get_integration(integration_id)
    redactor = _redactor(integration, ctx)
    try:
        output = await call()
    except IntegrationError as error:
        raise _redacted(error, redactor) from None
    except ValidationError as error:
        raise UNEXPECTED_RESPONSE.error(
            redactor.redact(f"{integration.name} answered with data Vigil cannot read: {_describe(error)}")
        ) from None
    result: dict[str, Any] = redactor.redact_data(output.model_dump(mode="json"))
    return result


async def test_connection(integration_id: str, ctx: SkillContext) -> ConnectionTestResult:
    """Authenticate/Test: configuration and vendor failures come back as a result with cause and remedy."""
    integration = get_integration(integration_id)
    problems = integration.validate_values(ctx.values)
    if problems:
        return ConnectionTestResult(
            ok=False,
            cause="Connection details incomplete",
            remedy=" ".join(problems.values()),
            detail=", ".join(sorted(problems)),
        )
    redactor = _redactor(integration, ctx)
    try:
        result = await integration.test(ctx)
    except IntegrationError as error:
        logger.info("connection test failed integration=%s code=%s", integration_id, error.code)
        result = ConnectionTestResult(
            ok=False, status_code=error.status_code, cause=error.cause, remedy=error.remedy, detail=error.message
        )
    return result.model_copy(
        update={
            "cause": redactor.redact_optional(result.cause),
            "remedy": redactor.redact_optional(result.remedy),
            "detail": redactor.redact_optional(result.detail),
        }
    )


test_connection.__test__ = False  # type: ignore[attr-defined]  # a product function, not a pytest test
