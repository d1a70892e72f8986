"""Secrets never leak: not into IntegrationError messages, connection-test results, nor log output."""

from __future__ import annotations

import logging

import pytest

from tests.fakes.fixtures import (
    CLOUDFLARE_KEY_VALUES,
    MDE_VALUES,
    call_skill,
    check_connection,
    endpoints,
    push_values,
    slack_values,
)
from vigil.integrations.cloudflare import fake as cf
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import Endpoints
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.push_security import fake as push
from vigil.integrations.push_security.fake import PushFake
from vigil.integrations.slack import fake as slack
from vigil.integrations.slack.fake import SlackFake


def _assert_clean(texts: list[str | None], secrets: list[str]) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in (text or ""), "a secret leaked into user-visible text or logs"


def test_no_secret_in_errors_results_or_logs(
    caplog: pytest.LogCaptureFixture,
    mde_fake: MdeFake,
    cloudflare_fake: CloudflareFake,
    slack_fake: SlackFake,
    push_fake: PushFake,
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong_secret = "Wr0ng~Secret.Value-That-Must-Not-Leak"
    wrong_key = "badc0ffee0ddf00dbadc0ffee0ddf00dbad01"
    webhook_secret = slack.WEBHOOK_PATH.rsplit("/", 1)[1]
    secrets = [
        mde.CLIENT_SECRET,
        wrong_secret,
        wrong_key,
        cf.GLOBAL_KEY,
        slack.BOT_TOKEN,
        webhook_secret,
        push.READ_KEY,
        "psk_wrong_key_value",
    ]

    results = [
        check_connection(
            "microsoft_defender", {**MDE_VALUES, "client_secret": wrong_secret}, endpoints(mde_fake=mde_fake)
        ),
        check_connection(
            "cloudflare",
            {**CLOUDFLARE_KEY_VALUES, "global_api_key": wrong_key},
            endpoints(cloudflare_fake=cloudflare_fake),
        ),
        check_connection(
            "slack",
            {**slack_values(slack_fake), "bot_token": "xoxb-0-0-not-valid"},
            endpoints(slack_fake=slack_fake),
        ),
        check_connection("push_security", push_values(push_fake, api_key="psk_wrong_key_value"), Endpoints()),
    ]
    assert not any(r.ok for r in results)
    texts: list[str | None] = [t for r in results for t in (r.cause, r.remedy, r.detail)]

    mde_fake.fail_next(3, status=500, path_contains="/api/", body={"error": {"code": "InternalServerError"}})
    slack_fake.fail_next(3, status=429, body="rate_limited", plain_text=True, headers={"Retry-After": "0"})
    push_fake.fail_next(3, status=503, body={"message": "down"})
    failing = [
        ("List Machines", MDE_VALUES, endpoints(mde_fake=mde_fake), {}),
        ("Send Chat Message", slack_values(slack_fake), endpoints(slack_fake=slack_fake), {"text": "x"}),
        ("List Accounts", push_values(push_fake), Endpoints(), {}),
    ]
    for skill_id, values, ends, inputs in failing:
        with pytest.raises(IntegrationError) as caught:
            call_skill(skill_id, values, ends, inputs)
        texts += [
            caught.value.message,
            caught.value.cause,
            caught.value.remedy,
            str(caught.value),
            repr(caught.value),
        ]

    assert any("outbound retry" in record.getMessage() for record in caplog.records)
    _assert_clean(texts + [record.getMessage() for record in caplog.records] + [caplog.text], secrets)
