"""alert_id sequences stay gap-free and unique under concurrent intake over real HTTP."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.support.harness import Harness
from vigil.integrations.live_server import LiveServer

CLIENTS = 8
ALERTS_PER_CLIENT = 250


def test_concurrent_clients_get_gap_free_unique_ids(harness: Harness) -> None:
    harness.add_org("ACME")
    key = harness.add_key("ACME").api_key

    with LiveServer(harness.app) as server:

        def send_many(client_number: int) -> list[str]:
            ids = []
            with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as http:
                for n in range(ALERTS_PER_CLIENT):
                    body = harness.alert_body(alert_content=f"client {client_number} alert {n}")
                    response = http.post("/serviceapi/alerts", json=body)
                    assert response.status_code == 201, response.text
                    ids.append(response.json()["alert_id"])
            return ids

        with ThreadPoolExecutor(CLIENTS) as pool:
            results = list(pool.map(send_many, range(CLIENTS)))

    all_ids = [alert_id for ids in results for alert_id in ids]
    total = CLIENTS * ALERTS_PER_CLIENT
    assert len(all_ids) == total
    assert sorted(int(a.rsplit("-", 1)[1]) for a in all_ids) == list(range(1, total + 1))
    for ids in results:
        numbers = [int(a.rsplit("-", 1)[1]) for a in ids]
        assert numbers == sorted(numbers), "each client sees its own ids increase"
