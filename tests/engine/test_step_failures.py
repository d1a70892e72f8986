"""A crashing internal skill is one failed step, and its playbook's `on_error` decides what follows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session

from tests.engine.conftest import engine_settings
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.investigations.schemas import InvestigationPlan
from vigil.investigations.steps import INTERNAL_SKILLS
from vigil.playbooks.schemas import AnalyzeStep, OnError, PlaybookDefinition, SkillStep

CRASHING = "Crashing lookup"


def crash(_session: Session, _plan: InvestigationPlan) -> dict[str, Any]:
    raise RuntimeError("lookup backend exploded")


@pytest.fixture
def harness_with_crashing_skill(db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    monkeypatch.setitem(INTERNAL_SKILLS, CRASHING, crash)
    with Harness(engine_settings(db_url, tmp_path, max_auto_retries=1), engine=True) as harness:
        harness.add_org("ACME")
        yield harness


def pin(harness: Harness, alert_type: str, on_error: OnError) -> None:
    definition = PlaybookDefinition(
        steps=[SkillStep(name="Crashy", skill=CRASHING, on_error=on_error), AnalyzeStep(name="Verdict")]
    )
    install_playbook(harness.db, "ACME", "okta", alert_type, definition)


def test_crashing_step_with_on_error_continue_still_completes(harness_with_crashing_skill: Harness) -> None:
    harness = harness_with_crashing_skill
    pin(harness, "Continue type", OnError.CONTINUE)
    key = harness.add_key("ACME").api_key
    harness.post_alert(key, harness.alert_body(provider="okta", alert_type="Continue type"))
    alert = harness.wait_for(key, lambda a: a and a[0]["investigation_status"] in (15, 20))[0]
    assert alert["investigation_status"] == 15
    case = harness.client.get(f"/serviceapi/cases/{alert['case_id']}", headers={"Authorization": f"Bearer {key}"})
    step = next(item for item in case.json()["evidence"] if item["name"] == "Crashy")  # after the org's facts
    assert (step["status"], step["error"]) == ("error", "Crashing lookup failed: RuntimeError")


def test_crashing_step_with_on_error_fail_is_rerun_then_stays_failed(harness_with_crashing_skill: Harness) -> None:
    harness = harness_with_crashing_skill
    pin(harness, "Fail type", OnError.FAIL)
    key = harness.add_key("ACME").api_key
    harness.post_alert(key, harness.alert_body(provider="okta", alert_type="Fail type"))
    alert = harness.wait_for(
        key, lambda a: a and a[0]["investigation_status"] == 20 and a[0]["investigation_retry_count"] == 1
    )[0]
    assert "Crashy" in alert["failure_reason"]
    assert alert["case_id"] is None
