"""Log hygiene: secrets in query strings never reach the access log."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from vigil.logging_setup import configure_logging
from vigil.settings import LogFormat


@pytest.fixture
def restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers, root.level = handlers, level


@pytest.mark.usefixtures("restore_root_logger")
def test_access_log_redacts_webhook_tokens() -> None:
    configure_logging(LogFormat.TEXT, "INFO")
    configure_logging(LogFormat.JSON, "INFO")
    access = logging.getLogger("uvicorn.access")
    record = access.makeRecord(
        access.name,
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "POST", "/serviceapi/webhooks/chat/v1/events?token=s3cr3tT0ken-value&x=1", "1.1", 200),
        None,
    )
    assert access.filter(record)
    assert "s3cr3tT0ken-value" not in record.getMessage()
    assert "token=<redacted>&x=1" in record.getMessage()
    assert len(access.filters) == len(set(map(id, access.filters))), "reconfiguring does not stack filters"
