"""Intake contracts under load, over real HTTP on both databases: 200 requests at once all get 201 with
contiguous ids (never a 503, SQLite included), same-key requests racing in one group replay one alert, and a
201 survives the server being killed with SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from tests.support.harness import Harness
from vigil.alerts.models import Alert
from vigil.integrations.live_server import LiveServer

CONCURRENT = 200
VIGIL = str(Path(sys.executable).with_name("vigil"))


def sequence_numbers(alert_ids: list[str]) -> list[int]:
    return sorted(int(alert_id.rsplit("-", 1)[1]) for alert_id in alert_ids)


async def post_all(
    url: str, key: str, bodies: list[dict[str, object]], headers: list[dict[str, str]]
) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=len(bodies))
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as http:
        return await asyncio.gather(
            *(
                http.post("/serviceapi/alerts", json=body, headers={"Authorization": f"Bearer {key}", **extra})
                for body, extra in zip(bodies, headers, strict=True)
            )
        )


def test_two_hundred_concurrent_requests_all_get_201_with_contiguous_ids(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    bodies: list[dict[str, object]] = [
        harness.alert_body(alert_type=None, alert_content=f"alert {n}") for n in range(CONCURRENT)
    ]
    with LiveServer(harness.app) as server:
        responses = asyncio.run(post_all(server.url, key, bodies, [{}] * CONCURRENT))

    assert [r.status_code for r in responses] == [201] * CONCURRENT, {r.status_code for r in responses}
    alert_ids = [r.json()["alert_id"] for r in responses]
    assert sequence_numbers(alert_ids) == list(range(1, CONCURRENT + 1))
    with harness.db.read() as session:
        stored = {
            row.alert_id: row.alert_content for row in session.execute(select(Alert.alert_id, Alert.alert_content))
        }
    assert stored == {r.json()["alert_id"]: r.json()["alert_content"] for r in responses}


def test_same_idempotency_key_racing_creates_one_alert(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    body = harness.alert_body(alert_type=None)
    other = harness.alert_body(alert_type=None, alert_content="another body")
    bodies: list[dict[str, object]] = [body] * 30 + [other] * 5
    with LiveServer(harness.app) as server:
        responses = asyncio.run(post_all(server.url, key, bodies, [{"Idempotency-Key": "same"}] * len(bodies)))

    statuses = [r.status_code for r in responses]
    created = [r for r in responses if r.status_code == 201]
    assert len(created) == 1
    first = created[0].json()
    # Whichever body won the race is the alert; same-body twins replay it, the other body is refused.
    twins = body if first["alert_content"] == body["alert_content"] else other
    assert statuses.count(200) == bodies.count(twins) - 1
    assert statuses.count(409) == len(bodies) - bodies.count(twins)
    assert {r.json()["alert_id"] for r in responses if r.status_code == 200} == {first["alert_id"]}
    with harness.db.read() as session:
        assert session.scalar(select(Alert.alert_id)) == first["alert_id"]
        assert len(list(session.scalars(select(Alert.id)))) == 1


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(db_url: str, data_dir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VIGIL_DATABASE_URL": db_url,
        "VIGIL_DATA_DIR": str(data_dir),
        "VIGIL_RATE_LIMIT_PER_SECOND": "100000",
        "VIGIL_RATE_LIMIT_BURST": "100000",
        "VIGIL_EXECUTOR_ID": f"intake-kill-{port}",
    }
    process = subprocess.Popen(
        [VIGIL, "serve", "--port", str(port)], env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "vigil serve did not start"
        time.sleep(0.2)


@pytest.mark.slow
def test_every_201_survives_sigkill_and_numbering_stays_gap_free(harness: Harness, db_url: str, tmp_path: Path) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key
    port = free_port()
    log = tmp_path / "serve.log"
    server = start_server(db_url, tmp_path / "data", port, log)
    acknowledged: dict[str, str] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def sender(number: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            n = 0
            while not stop.is_set():
                content = f"sender {number} alert {n}"
                try:
                    response = http.post(
                        "/serviceapi/alerts",
                        json=harness.alert_body(alert_type=None, alert_content=content),
                        headers={"Authorization": f"Bearer {key}"},
                    )
                except httpx.TransportError:
                    return  # the server is gone: this alert was never acknowledged
                assert response.status_code == 201, response.text
                with lock:
                    acknowledged[response.json()["alert_id"]] = content
                n += 1

    senders = [threading.Thread(target=sender, args=(n,)) for n in range(16)]
    try:
        for thread in senders:
            thread.start()
        deadline = time.monotonic() + 30
        while len(acknowledged) < 300:  # killed mid-stream, with requests in flight
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.01)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
    finally:
        stop.set()
        for thread in senders:
            thread.join(timeout=30)
        if server.poll() is None:
            server.kill()

    with harness.db.read() as session:
        stored = {
            row.alert_id: row.alert_content for row in session.execute(select(Alert.alert_id, Alert.alert_content))
        }
    assert acknowledged.items() <= stored.items(), "an acknowledged alert was lost or changed"
    assert sequence_numbers(list(stored)) == list(range(1, len(stored) + 1))

    restarted = start_server(db_url, tmp_path / "data", port, log)
    try:
        response = httpx.post(
            f"http://127.0.0.1:{port}/serviceapi/alerts",
            json=harness.alert_body(alert_type=None),
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.wait(timeout=30)
    assert response.status_code == 201
    assert response.json()["alert_id"] == f"ACME-CLOUDFLARE-{len(stored) + 1}"
