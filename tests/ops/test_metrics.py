"""/metrics exposes what an operator alerts on, read from the database, and still answers when it is down."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select, update

from tests.api.test_operations import _take_database_down
from tests.support.harness import Harness
from vigil.ai.schemas import EvidenceStatus
from vigil.alerts.constants import InvestigationStatus
from vigil.alerts.models import Alert
from vigil.alerts.service import transition
from vigil.db.base import epoch_now
from vigil.integrations.catalog import RELATED_SKILL_ID
from vigil.integrations.chat import SentQuestion
from vigil.investigations import checkpoints
from vigil.investigations.models import ChatCheckpoint
from vigil.investigations.schemas import StepRecord
from vigil.investigations.service import record_step

DASHBOARD = Path(__file__).parents[2] / "docs" / "grafana-dashboard.json"
DAY = 86_400
CLOUDFLARE_SKILL = "Get Edge Audit Logs"


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of an exposition, keyed by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(exposed: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    return exposed[(name, frozenset(labels.items()))]


class Seed:
    """Alerts posted through intake, then moved and backdated as an engine (and time) would have."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        harness.add_org("ACME")
        harness.add_org("BETA")
        self.key = harness.add_key("ACME", "BETA").api_key
        self.now = epoch_now()

    def alert(self, org: str = "ACME", *, age: int = 0, **overrides: Any) -> uuid.UUID:
        response = self.harness.post_alert(self.key, self.harness.alert_body(org, **overrides))
        assert response.status_code == 201, response.text
        alert_uuid = uuid.UUID(response.json()["alert_uuid"])
        with self.harness.db.write() as session:
            session.execute(update(Alert).where(Alert.alert_uuid == alert_uuid).values(created_at=self.now - age))
        return alert_uuid

    def move(self, alert_uuid: uuid.UUID, to: InvestigationStatus, **values: Any) -> None:
        with self.harness.db.write() as session:
            moved = transition(
                session, alert_uuid, allowed_from=set(InvestigationStatus), to=to, actor="test", **values
            )
            assert moved is not None

    def step(
        self, alert_uuid: uuid.UUID, position: int, skill_id: str, status: EvidenceStatus, code: str | None = None
    ) -> None:
        record = StepRecord(
            position=position,
            name=f"step {position}",
            kind="skill",
            skill_id=skill_id,
            status=status,
            error="failed" if status is EvidenceStatus.ERROR else None,
            error_code=code,
            started_at=self.now,
        )
        with self.harness.db.write() as session:
            record_step(session, alert_uuid, 1, record)

    def checkpoint(self, alert_uuid: uuid.UUID, connection_uuid: uuid.UUID, *, asked: bool, age: int) -> None:
        """A question opened (status asking) and, when `asked`, put to the person (waiting) `age` seconds ago."""
        with self.harness.db.write() as session:
            organization_uuid = session.scalars(
                select(Alert.organization_uuid).where(Alert.alert_uuid == alert_uuid)
            ).one()
            row = checkpoints.open_checkpoint(
                session,
                alert_uuid=alert_uuid,
                attempt=1,
                position=0,
                organization_uuid=organization_uuid,
                connection_uuid=connection_uuid,
                connection_name="slack",
                provider_id="slack",
                email="analyst@acme.example",
                question="Was this you?",
                timeout=checkpoints.CheckpointTimeout(3600, checkpoints.TimeoutSource.ENVIRONMENT),
            )
            if asked:
                sent = SentQuestion(
                    recipient_id="U1", conversation_id="D1", message_ref={"channel": "D1", "ts": "1.0"}, posted_at="1.0"
                )
                checkpoints.mark_asked(session, row.checkpoint_uuid, sent, 3600)
            session.execute(
                update(ChatCheckpoint)
                .where(ChatCheckpoint.checkpoint_uuid == row.checkpoint_uuid)
                .values(created_at=self.now - age)
            )

    def slack_connection(self) -> uuid.UUID:
        response = self.harness.client.post(
            "/serviceapi/connections",
            json={
                "organization_code": "ACME",
                "integration_id": "slack",
                "name": "slack",
                "fields": {
                    "webhook_url": "http://127.0.0.1:9/services/T0/B0/x",
                    "channel": "#soc-alerts",
                    "bot_token": "xoxb-test",
                    "signing_secret": "test-signing-secret",
                },
            },
            headers={"Authorization": f"Bearer {self.harness.add_key().api_key}"},
        )
        assert response.status_code == 201, response.text
        return uuid.UUID(response.json()["connection_uuid"])


def test_operations_series_report_queue_statuses_durations_checkpoints_and_skill_errors(harness: Harness) -> None:
    seed = Seed(harness)
    seed.alert("ACME", age=300)  # Created: waiting for the submitter
    seed.alert("ACME", age=5000, alert_type=None)  # no type: never investigated, so not in the queue
    submitted = seed.alert("BETA", age=120)
    seed.move(submitted, InvestigationStatus.SUBMITTED)
    running = seed.alert("ACME", age=900)
    seed.move(running, InvestigationStatus.IN_PROGRESS)
    quick, slow, old = seed.alert(age=100), seed.alert(age=4000), seed.alert(age=2 * DAY)
    for alert_uuid in (quick, slow, old):
        seed.move(alert_uuid, InvestigationStatus.COMPLETED, completed_at=seed.now)
    seed.move(seed.alert(age=50), InvestigationStatus.FAILED)
    seed.step(quick, 0, CLOUDFLARE_SKILL, EvidenceStatus.ERROR, "invalid_token")
    seed.step(quick, 1, RELATED_SKILL_ID, EvidenceStatus.OK)
    seed.step(slow, 0, CLOUDFLARE_SKILL, EvidenceStatus.ERROR, "invalid_token")
    seed.step(slow, 1, RELATED_SKILL_ID, EvidenceStatus.ERROR, "internal_error")
    seed.step(slow, 2, CLOUDFLARE_SKILL, EvidenceStatus.SKIPPED)
    seed.step(slow, 3, CLOUDFLARE_SKILL, EvidenceStatus.ERROR, "rate_limited")
    seed.step(running, 0, CLOUDFLARE_SKILL, EvidenceStatus.ERROR)  # recorded before steps kept their code
    seed.step(old, 0, CLOUDFLARE_SKILL, EvidenceStatus.ERROR, "invalid_token")  # outside the 24 h window
    connection = seed.slack_connection()
    seed.checkpoint(running, connection, asked=True, age=600)
    seed.checkpoint(quick, connection, asked=True, age=60)
    seed.checkpoint(slow, connection, asked=False, age=30)  # still being sent: not waiting yet

    response = harness.client.get("/metrics")
    assert response.status_code == 200
    exposed = samples(response.text)

    assert value(exposed, "vigil_metrics_database_up") == 1
    assert value(exposed, "vigil_investigation_queue_depth", organization="ACME", status="created") == 1
    assert value(exposed, "vigil_investigation_queue_depth", organization="BETA", status="submitted") == 1
    assert not any(name == "vigil_investigation_queue_depth" and len(key) != 2 for name, key in exposed)
    assert sum(v for (name, _), v in exposed.items() if name == "vigil_investigation_queue_depth") == 2
    assert 300 <= value(exposed, "vigil_investigation_oldest_pending_age_seconds") < 330
    for status, count in {"created": 2, "submitted": 1, "in_progress": 1}.items():
        assert value(exposed, "vigil_investigations_open", status=status) == count
    for status, count in {"completed": 2, "failed": 1}.items():  # the 2-day-old completed one is outside the window
        assert value(exposed, "vigil_investigations_finished", status=status) == count
    buckets = {
        le: value(exposed, "vigil_investigation_duration_seconds_bucket", le=le)
        for le in ("60.0", "120.0", "3600.0", "7200.0", "+Inf")
    }
    assert buckets == {"60.0": 0, "120.0": 1, "3600.0": 1, "7200.0": 2, "+Inf": 2}
    assert value(exposed, "vigil_investigation_duration_seconds_count") == 2
    assert 4100 <= value(exposed, "vigil_investigation_duration_seconds_sum") < 4160
    assert value(exposed, "vigil_checkpoints_waiting") == 2
    assert 600 <= value(exposed, "vigil_checkpoint_oldest_wait_seconds") < 630
    errors = {key: v for (name, key), v in exposed.items() if name == "vigil_skill_call_errors"}
    assert errors == {
        frozenset({"integration": "cloudflare", "skill": CLOUDFLARE_SKILL, "code": "invalid_token"}.items()): 2,
        frozenset({"integration": "cloudflare", "skill": CLOUDFLARE_SKILL, "code": "rate_limited"}.items()): 1,
        frozenset({"integration": "cloudflare", "skill": CLOUDFLARE_SKILL, "code": "unknown"}.items()): 1,
        frozenset({"integration": "vigil", "skill": RELATED_SKILL_ID, "code": "internal_error"}.items()): 1,
    }


def test_operations_series_are_zero_not_missing_on_an_empty_database(harness: Harness) -> None:
    exposed = samples(harness.client.get("/metrics").text)
    assert value(exposed, "vigil_investigation_oldest_pending_age_seconds") == 0
    assert value(exposed, "vigil_investigations_open", status="in_progress") == 0
    assert value(exposed, "vigil_investigations_finished", status="failed") == 0
    assert value(exposed, "vigil_investigation_duration_seconds_count") == 0
    assert value(exposed, "vigil_checkpoints_waiting") == 0
    assert value(exposed, "vigil_checkpoint_oldest_wait_seconds") == 0


def test_metrics_answer_without_the_database_series_when_it_is_down(
    harness: Harness, backend: str, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    harness.add_org("ACME")
    assert harness.post_alert(harness.add_key("ACME").api_key).status_code == 201
    _take_database_down(harness, backend, db_url)
    response = harness.client.get("/metrics")
    assert response.status_code == 200
    exposed = samples(response.text)
    assert value(exposed, "vigil_metrics_database_up") == 0
    assert value(exposed, "vigil_alerts_ingested_total", alert_provider="cloudflare") >= 1
    assert not any(name.startswith(("vigil_investigation", "vigil_checkpoint")) for name, _ in exposed)
    assert "operations series left out" in caplog.text


def test_sample_dashboard_queries_only_series_that_metrics_exposes(harness: Harness) -> None:
    exposed = {family.name for family in text_string_to_metric_families(harness.client.get("/metrics").text)}
    dashboard = json.loads(DASHBOARD.read_text())
    queried = {
        re.sub(r"_(bucket|count|sum|total)$", "", name)
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
        for name in re.findall(r"\bvigil_[a-z_]+", target["expr"])
    }
    assert len(queried) >= 10
    assert queried <= exposed, queried - exposed
