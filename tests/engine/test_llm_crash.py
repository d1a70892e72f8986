"""A worker killed between two model calls resumes without repeating the call that had finished."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from tests.engine.test_worker_crash import VIGIL, pg_url, wait_until_workers_run
from tests.fakes.llm import OPENAI_KEY, LlmCall, LlmFake, Reply, ToolCall
from tests.support.harness import Harness
from tests.support.llm import DRAFT, SIGN_IN, VERDICT, is_draft
from vigil.investigations.models import AiExchange
from vigil.settings import Settings

__all__ = ["pg_url"]

WORKER = "llm-worker"


def start_worker(db_url: str, tmp_path: Path, fake: LlmFake) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VIGIL_DATABASE_URL": db_url,
        "VIGIL_DATA_DIR": str(tmp_path / "worker"),
        "VIGIL_EXECUTOR_ID": WORKER,
        "VIGIL_QUEUE_POLL_SECONDS": "0.1",
        "VIGIL_HEARTBEAT_SECONDS": "0.5",
        "VIGIL_DEAD_WORKER_SECONDS": "2",
        "VIGIL_AI_MODEL": "openai-chat:gpt-test",
        "VIGIL_AI_BASE_URL": fake.openai_base_url,
        "VIGIL_AI_API_KEY": OPENAI_KEY,
        "VIGIL_AI_REQUEST_TIMEOUT_SECONDS": "60",
    }
    log = (tmp_path / "worker.log").open("ab")
    return subprocess.Popen([VIGIL, "worker"], env=env, stdout=log, stderr=subprocess.STDOUT)


@pytest.mark.slow
@pytest.mark.serial
def test_a_crash_between_model_calls_does_not_repeat_the_finished_call(
    pg_url: str, tmp_path: Path, llm_fake: LlmFake
) -> None:
    verdicts_asked = threading.Event()
    analysis_requests = 0

    def answer(call: LlmCall) -> Reply:
        nonlocal analysis_requests
        if is_draft(call):
            return Reply(tool_calls=(ToolCall("final_result", DRAFT),), input_tokens=400, output_tokens=30)
        analysis_requests += 1
        verdicts_asked.set()
        # The first analysis request hangs until the worker is killed under it; the resumed one is answered.
        delay = 30.0 if analysis_requests == 1 else 0.0
        return Reply(tool_calls=(ToolCall("final_result", VERDICT),), delay_seconds=delay)

    llm_fake.respond_with(answer)
    settings = Settings(database_url=pg_url, data_dir=tmp_path / "api", rate_limit_burst=1000)
    worker = start_worker(pg_url, tmp_path, llm_fake)
    try:
        with Harness(settings) as api:
            wait_until_workers_run(api, {WORKER}, [worker])
            api.add_org("ACME")
            key = api.add_key("ACME").api_key
            body = api.alert_body(provider="okta", alert_type="Suspicious sign-in", alert_content=SIGN_IN)
            assert api.post_alert(key, body).status_code == 201
            assert verdicts_asked.wait(60), "the worker never asked for the verdict"
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            time.sleep(2.5)  # the dead worker's heartbeat goes stale, so its id may be taken again
            worker = start_worker(pg_url, tmp_path, llm_fake)
            (alert,) = api.wait_for(key, lambda a: len(a) == 1 and a[0]["investigation_status"] == 15, timeout=90)
            with api.db.read() as session:
                rows = session.execute(select(AiExchange.stage, AiExchange.seq, AiExchange.error_kind)).all()
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                worker.kill()
    drafts = [call for call in llm_fake.calls if is_draft(call)]
    assert len(drafts) == 1, "the finished draft request was repeated after the restart"
    assert analysis_requests == 2  # the interrupted one, asked again once
    assert sorted(rows) == [("analyze", 1, None), ("draft", 1, None)]
    assert alert["case_id"]
