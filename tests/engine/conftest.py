"""Engine tests: fast polling and backoff so durable behaviour is exercised in seconds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fixtures import mde_fake, mde_server
from tests.fakes.llm import llm_fake, llm_server
from tests.support.harness import Harness
from vigil.settings import Settings

__all__ = ["llm_fake", "llm_server", "mde_fake", "mde_server"]


def engine_settings(db_url: str, tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": db_url,
        "data_dir": tmp_path / "data",
        "rate_limit_per_second": 10_000,
        "rate_limit_burst": 10_000,
        "queue_poll_seconds": 0.1,
        "retry_backoff_seconds": 0.2,
        "skill_retry_backoff_seconds": 0.05,
        "heartbeat_seconds": 0.5,
        "executor_id": "test-engine",
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
def engine_harness(db_url: str, tmp_path: Path) -> Iterator[Harness]:
    with Harness(engine_settings(db_url, tmp_path), engine=True) as harness:
        yield harness
