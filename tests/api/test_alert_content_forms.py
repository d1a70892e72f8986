"""alert_content's two forms: a string is stored byte for byte (the seed's contract), a JSON object or array is
stored as its compact JSON text; the size limit and the idempotency hash see the stored string; any other JSON
value is a 422 that says what to send."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.harness import Harness

ALERT = {"user": {"email": "jané@acme.example", "ip": "203.0.113.7"}, "score": 7.5, "tags": ["mfa", None, True]}
CANONICAL = '{"user":{"email":"jané@acme.example","ip":"203.0.113.7"},"score":7.5,"tags":["mfa",null,true]}'


@pytest.fixture
def acme(harness: Harness) -> str:
    harness.add_org("ACME", "Acme Corp")
    return harness.add_key("ACME").api_key


def _post_raw(harness: Harness, key: str, path: str, body: str) -> Any:
    return harness.client.post(
        path, content=body.encode(), headers={"Cookie": f"Session={key}", "Content-Type": "application/json"}
    )


def _fetched_content(harness: Harness, key: str, alert_id: str) -> str:
    fetched = harness.client.get(f"/serviceapi/alerts/{alert_id}", headers={"Cookie": f"Session={key}"})
    assert fetched.status_code == 200
    content: str = fetched.json()["alert_content"]
    return content


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        (ALERT, CANONICAL),  # keys keep the order sent; non-ASCII stays as is
        ([{"b": 1, "a": 2}, "x"], '[{"b":1,"a":2},"x"]'),
        ({}, "{}"),
    ],
)
def test_a_json_object_or_array_is_stored_as_its_compact_text(
    harness: Harness, acme: str, sent: Any, stored: str
) -> None:
    assert json.dumps(sent, separators=(",", ":"), ensure_ascii=False) == stored
    created = harness.post_alert(acme, harness.alert_body(alert_content=sent))
    assert created.status_code == 201, created.text
    assert created.json()["alert_content"] == stored
    assert _fetched_content(harness, acme, created.json()["alert_id"]) == stored


def test_a_string_is_still_stored_exactly_as_sent(harness: Harness, acme: str) -> None:
    # JSON text with spacing, key order and an escape the object form would normalize: kept byte for byte.
    content = '{ "user" : {"email": "jan\\u00e9@acme.example"},\n  "score": 7.50 }'
    created = harness.post_alert(acme, harness.alert_body(alert_content=content))
    assert created.status_code == 201
    assert created.json()["alert_content"] == content
    assert _fetched_content(harness, acme, created.json()["alert_id"]) == content


def test_replaying_the_same_object_body_is_idempotent(harness: Harness, acme: str) -> None:
    body = harness.alert_body(alert_content=ALERT)
    first = harness.post_alert(acme, body, **{"Idempotency-Key": "obj-1"})
    replay = harness.post_alert(acme, body, **{"Idempotency-Key": "obj-1"})
    assert (first.status_code, replay.status_code) == (201, 200)
    assert replay.json() == first.json()
    # The object and the string it is stored as are the same request.
    as_text = harness.post_alert(acme, harness.alert_body(alert_content=CANONICAL), **{"Idempotency-Key": "obj-1"})
    assert as_text.status_code == 200
    assert as_text.json()["alert_uuid"] == first.json()["alert_uuid"]
    changed = harness.alert_body(alert_content=ALERT | {"score": 8})
    conflict = harness.post_alert(acme, changed, **{"Idempotency-Key": "obj-1"})
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "idempotency_key_conflict"


def test_the_size_limit_counts_the_stored_string(harness: Harness, acme: str) -> None:
    limit = harness.settings.max_alert_content_bytes
    # Whitespace between tokens makes the body larger than the limit; the stored compact text is not.
    padded = '{"organization_code": "ACME", "alert_provider": "cloudflare", "alert_content": {"a": ' + (
        f'"{"x" * (limit - 100)}"{" " * 200}}}}}'
    )
    assert len(padded.encode()) > limit
    created = _post_raw(harness, acme, "/serviceapi/alerts", padded)
    assert created.status_code == 201, created.text
    assert len(created.json()["alert_content"].encode()) < limit
    too_large = harness.post_alert(acme, harness.alert_body(alert_content={"a": "é" * (limit // 2)}))
    assert too_large.status_code == 413
    assert too_large.json()["error"]["code"] == "alert_content_too_large"


@pytest.mark.parametrize("value", [42, 1.5, True, None])
def test_other_json_values_are_422_saying_to_send_a_string(harness: Harness, acme: str, value: Any) -> None:
    response = harness.post_alert(acme, harness.alert_body(alert_content=value))
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    [detail] = error["details"]
    assert detail["field"] == "alert_content"
    assert "alert_content must be a string" in detail["message"]
    assert "send other JSON values as a string" in detail["message"]


@pytest.mark.parametrize(
    ("content", "kind"),
    [('{"a": NaN}', "alert_content_not_json"), ('{"a": "\\ud800"}', "text_surrogate")],
)
def test_objects_that_cannot_be_stored_as_json_text_are_422(
    harness: Harness, acme: str, content: str, kind: str
) -> None:
    body = '{"organization_code": "ACME", "alert_provider": "cloudflare", "alert_content": ' + content + "}"
    response = _post_raw(harness, acme, "/serviceapi/alerts", body)  # Python's JSON parser accepts NaN
    assert response.status_code == 422, response.text
    [detail] = response.json()["error"]["details"]
    assert (detail["field"], detail["type"]) == ("alert_content", kind)


def test_batch_items_take_both_forms_and_fail_alone(harness: Harness, acme: str) -> None:
    items = [
        harness.alert_body(alert_content=ALERT),
        harness.alert_body(alert_content="plain text, kept as sent"),
        harness.alert_body(alert_content=42),
    ]
    response = harness.client.post(
        "/serviceapi/alerts/batch", json={"alerts": items}, headers={"Authorization": f"Bearer {acme}"}
    )
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["status"] for r in results] == [201, 201, 422]
    assert [r["alert"]["alert_content"] for r in results[:2]] == [CANONICAL, "plain text, kept as sent"]
    assert "send other JSON values as a string" in results[2]["error"]["details"][0]["message"]
