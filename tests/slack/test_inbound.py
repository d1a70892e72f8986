"""E4/E5 against a real app on SQLite and PostgreSQL, with Slack played by a signing sender."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session

from tests.slack.conftest import Seen, SlackSetup
from vigil.integrations.models import Connection
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack import inbound
from vigil.integrations.slack.fake_sender import block_actions, message_im, url_verification
from vigil.integrations.slack.signature import SignatureFailure, compute_signature, verify_request

SIGNATURE = "X-Slack-Signature"
TIMESTAMP = "X-Slack-Request-Timestamp"


def assert_unverified(response: Any) -> None:
    assert response.status_code == 401, response.text
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}, body
    assert body["error"]["code"] == "chat_request_unverified"


def test_reference_vector_verifies_and_tampering_does_not() -> None:
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V"
        b"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text="
        b"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN"
        b"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
    )
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    secret, stamp = "8f742231b10e8888abcd99yyyzzz85a5", "1531420618"
    assert compute_signature(secret, stamp, body) == expected
    headers = {"x-slack-signature": expected, "x-slack-request-timestamp": stamp}
    assert verify_request(secret, headers, body, now=1531420618 + 300) is None
    assert verify_request(secret, headers, body, now=1531420618 - 300) is None
    assert verify_request(secret, headers, body, now=1531420618 + 301) is SignatureFailure.STALE_TIMESTAMP
    assert verify_request(secret, headers, body + b"x", now=1531420618) is SignatureFailure.BAD_SIGNATURE
    assert verify_request(secret, {**headers, "x-slack-signature": "v0=é"}, body, now=1531420618) is (
        SignatureFailure.BAD_SIGNATURE
    )
    assert verify_request(secret, {SIGNATURE: expected}, body) is SignatureFailure.MISSING_HEADERS
    assert verify_request(secret, {**headers, "x-slack-request-timestamp": "soon"}, body) is (
        SignatureFailure.BAD_TIMESTAMP
    )


def test_url_verification_answers_the_challenge(chat: SlackSetup) -> None:
    response = chat.sender.event(chat.token, url_verification("abc123"))
    assert response.status_code == 200, response.text
    assert response.json() == {"challenge": "abc123"}
    assert chat.rows() == (0, 0)


def test_url_verification_is_only_answered_when_signed(chat: SlackSetup) -> None:
    assert_unverified(chat.sender.event(chat.token, url_verification("abc123"), secret="not-the-secret"))


def test_signed_message_im_event_is_recorded_and_dispatched(chat: SlackSetup, seen: Seen) -> None:
    response = chat.sender.event(chat.token, message_im("Ev1", text="yes"))
    assert response.status_code == 200, response.text
    assert chat.rows() == (1, 0)
    assert [(e.event_id, e.event_type, e.event["text"]) for e in seen.events] == [("Ev1", "message.im", "yes")]
    assert str(seen.events[0].connection_uuid) == chat.connection["connection_uuid"]
    assert str(seen.events[0].organization_uuid) == chat.connection["organization_uuid"]


def test_duplicate_event_id_is_processed_once(chat: SlackSetup, seen: Seen) -> None:
    first = chat.sender.event(chat.token, message_im("EvDup"))
    retried = [chat.sender.event(chat.token, message_im("EvDup"), retry_num=n) for n in (1, 2, 3)]
    assert first.status_code == 200 and all(r.status_code == 200 for r in retried)
    assert chat.rows() == (1, 0)
    assert len(seen.events) == 1
    chat.sender.event(chat.token, message_im("EvOther"))
    assert chat.rows() == (2, 0) and len(seen.events) == 2


def test_bot_authored_message_is_recorded_but_not_dispatched(chat: SlackSetup, seen: Seen) -> None:
    payload = message_im("EvBot")
    payload["event"] |= {"bot_id": "BZYBOTHED", "subtype": "bot_message"}
    assert chat.sender.event(chat.token, payload).status_code == 200
    assert chat.rows() == (1, 0) and seen.events == []


def test_handler_failure_records_nothing_so_the_retry_is_processed(chat: SlackSetup, seen: Seen) -> None:
    def broken(_session: Session, _event: inbound.InboundEvent) -> None:
        raise RuntimeError("boom")

    inbound.register_event_handler("message.im", broken)
    try:
        assert chat.sender.event(chat.token, message_im("EvRetry")).status_code == 500
        assert chat.rows() == (0, 0)
    finally:
        inbound.unregister_event_handler("message.im", broken)
    seen.events.clear()  # the other hook ran before the failure; only the database rolled back
    assert chat.sender.event(chat.token, message_im("EvRetry"), retry_num=1).status_code == 200
    assert chat.rows() == (1, 0) and [e.event_id for e in seen.events] == ["EvRetry"]


REJECTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "bad_signature": ({"secret": "wrong-secret"}, "bad_signature"),
    "missing_signature": ({"drop": (SIGNATURE,)}, "missing_headers"),
    "missing_timestamp": ({"drop": (TIMESTAMP,)}, "missing_headers"),
    "missing_both_headers": ({"drop": (SIGNATURE, TIMESTAMP)}, "missing_headers"),
    "old_timestamp": ({"skew": -301}, "stale_timestamp"),
    "future_timestamp": ({"skew": 310}, "stale_timestamp"),
}


@pytest.mark.parametrize("case", list(REJECTIONS))
def test_unverified_event_is_401_and_changes_nothing(
    chat: SlackSetup, seen: Seen, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    sign_args, reason = dict(REJECTIONS[case][0]), REJECTIONS[case][1]
    if "skew" in sign_args:
        sign_args["timestamp"] = int(time.time()) + sign_args.pop("skew")
    with caplog.at_level(logging.WARNING, logger="vigil.chat.inbound"):
        assert_unverified(chat.sender.event(chat.token, message_im("EvX"), **sign_args))
    assert chat.rows() == (0, 0) and seen.events == []
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(f"reason={reason}" in line for line in lines), lines
    assert not any(slack.SIGNING_SECRET in line or chat.token in line for line in caplog.text.splitlines())


@pytest.mark.parametrize("token", ["unknown-token", "", None])
def test_unknown_or_missing_token_is_401(
    chat: SlackSetup, seen: Seen, token: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="vigil.chat.inbound"):
        assert_unverified(chat.sender.event(token, message_im("EvX")))
        assert_unverified(chat.sender.interaction(token, block_actions()))
    assert chat.rows() == (0, 0) and seen.events == [] and seen.interactions == []
    assert "reason=unknown_token" in caplog.text or "reason=missing_token" in caplog.text


def test_body_changed_after_signing_is_401(chat: SlackSetup) -> None:
    signed = json.dumps(message_im("EvA")).encode()
    sent = json.dumps(message_im("EvB")).encode()
    headers = chat.sender.headers(signed, "application/json")
    assert_unverified(chat.sender.post("/serviceapi/webhooks/chat/v1/events", chat.token, sent, headers))
    assert chat.rows() == (0, 0)


def test_rotated_or_expired_token_is_401(chat: SlackSetup) -> None:
    old = chat.token
    rotated = chat.harness.client.post(
        f"/serviceapi/connections/{chat.connection['connection_uuid']}/webhook-token", headers=chat.auth
    )
    assert rotated.status_code == 200, rotated.text
    assert_unverified(chat.sender.event(old, message_im("EvOld")))
    new = rotated.json()["webhook_token"]
    assert chat.sender.event(new, message_im("EvNew")).status_code == 200
    with chat.harness.db.write() as session:
        session.execute(update(Connection).values(expires_at=1))
    assert_unverified(chat.sender.event(new, message_im("EvExpired")))
    assert chat.rows() == (1, 0)


def test_signed_block_actions_is_recorded_once(chat: SlackSetup, seen: Seen) -> None:
    press = block_actions("checkpoint_deny", '{"checkpoint_id": "c1", "decision": "deny"}', user_id="W42")
    assert chat.sender.interaction(chat.token, press).status_code == 200
    assert chat.sender.interaction(chat.token, press).status_code == 200  # double click / redelivery
    assert chat.rows() == (0, 1)
    [got] = seen.interactions
    assert (got.interaction_type, got.action_id, got.user_id, got.message_ts, got.channel_id) == (
        "block_actions",
        "checkpoint_deny",
        "W42",
        "111.222",
        "D111",
    )
    assert json.loads(got.action_value) == {"checkpoint_id": "c1", "decision": "deny"}
    later = block_actions("checkpoint_deny", user_id="W42", action_ts="1596530399.000001")
    assert chat.sender.interaction(chat.token, later).status_code == 200
    assert chat.rows() == (0, 2) and len(seen.interactions) == 2


def test_unsigned_block_actions_is_401_and_changes_nothing(chat: SlackSetup, seen: Seen) -> None:
    assert_unverified(chat.sender.interaction(chat.token, block_actions(), secret="wrong-secret"))
    assert_unverified(chat.sender.interaction(chat.token, block_actions(), timestamp=int(time.time()) - 600))
    assert_unverified(chat.sender.interaction(chat.token, block_actions(), drop=(SIGNATURE,)))
    assert chat.rows() == (0, 0) and seen.interactions == []


def test_signed_but_malformed_interaction_is_400_and_changes_nothing(chat: SlackSetup) -> None:
    body = b"payload=%7Bnot-json"
    headers = chat.sender.headers(body, "application/x-www-form-urlencoded")
    response = chat.sender.post("/serviceapi/webhooks/chat/v1/interactions", chat.token, body, headers)
    assert response.status_code == 400, response.text
    assert chat.rows() == (0, 0)
