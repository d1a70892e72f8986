"""Vendor echoes of credentials never leave the integrations layer: the connection test, skill errors and skill
output are redacted of every secret value, its encodings and the bearer token the vendor issued."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from tests.fakes.fixtures import call_skill, check_connection, vendor_urls
from tests.integrations.echo_vendor import CLIENT_ID, CLIENT_SECRET, PUSH_KEY, TENANT_ID, EchoVendor
from vigil.integrations.errors import IntegrationError
from vigil.integrations.framework import Endpoints
from vigil.integrations.redaction import REDACTED, Redactor


@pytest.fixture(scope="module")
def echo_server() -> Iterator[EchoVendor]:
    fake = EchoVendor()
    with fake.serve():
        yield fake


@pytest.fixture
def echo(echo_server: EchoVendor) -> EchoVendor:
    echo_server.reset()
    return echo_server


def push_values(echo: EchoVendor) -> dict[str, str]:
    return {"domain": echo.url, "api_key": PUSH_KEY}


def assert_clean(text: str, echo: EchoVendor) -> None:
    leaked = [value for value in echo.echoed() if value in text]
    assert not leaked, f"leaked {len(leaked)} echoed credential form(s): {text}"


def test_redactor_removes_value_url_encoding_json_escape_and_base64() -> None:
    redactor = Redactor([PUSH_KEY, "short"])
    text = (
        f"a {PUSH_KEY} b {base64.b64encode(PUSH_KEY.encode()).decode()} "
        f"c {'psk_echo_7Qm%2Bz%2F4Lw%3DK9r%26x2Vb%23Tt5Hs%21Np3Ye'} d short"
    )
    cleaned = redactor.redact(text)
    assert cleaned.count(REDACTED) == 3 and "short" in cleaned  # values under 6 characters are left alone
    assert PUSH_KEY not in cleaned and "Qm%2Bz" not in cleaned


def test_redactor_learns_bearer_and_basic_credentials_from_headers() -> None:
    redactor = Redactor()
    pair = base64.b64encode(b"svc-user:B4sic-pa55word").decode()
    redactor.learn_headers({"Authorization": f"Basic {pair}", "x-api-key": "k3y-value-123", "Accept": "text/plain"})
    cleaned = redactor.redact(f"{pair} B4sic-pa55word svc-user:B4sic-pa55word k3y-value-123 text/plain")
    assert cleaned == f"{REDACTED} {REDACTED} {REDACTED} {REDACTED} text/plain"


def test_connection_test_detail_never_holds_the_echoed_key(echo: EchoVendor) -> None:
    result = check_connection("push_security", push_values(echo), Endpoints())
    assert not result.ok and result.status_code == 401
    assert result.cause == "Key incorrect or expired" and REDACTED in (result.detail or "")
    assert_clean(result.model_dump_json(), echo)


def test_skill_error_with_echoed_bearer_token_and_client_secret_is_redacted(echo: EchoVendor) -> None:
    ends = Endpoints(vendor_urls(mde=echo.url))
    values = {"tenant_id": TENANT_ID, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    with pytest.raises(IntegrationError) as raised:
        call_skill("List Machines", values, ends)
    error = raised.value
    assert echo.issued and echo.sent_secrets == [CLIENT_SECRET]  # the vendor did echo both
    assert error.cause == "Insufficient API permissions" and error.remedy == "Grant administrator consent."
    assert_clean(f"{error.message} {error.cause} {error.remedy} {error!r}", echo)


def test_skill_output_echoing_the_key_is_redacted(echo: EchoVendor) -> None:
    echo.reject, echo.leak_in_data = False, True
    output = call_skill("List Accounts", push_values(echo), Endpoints(), {"max_pages": 1})
    assert output["count"] == 1 and output["accounts"][0]["app_type"] == f"APP seen with key {REDACTED}"
    assert_clean(str(output), echo)
