"""Which timeout a Chat Checkpoint waits: the step's own > the organization's override > the console's
service-wide setting > VIGIL_CHECKPOINT_TIMEOUT_SECONDS. Resolved when the question is asked and recorded in
the step's inputs. SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import vendor_urls
from tests.slack.checkpointing import SIGN_IN_TYPE, Checkpointed, SlackSide, checkpoint_row, running
from tests.support.harness import Harness
from vigil.alerts.constants import InvestigationStatus
from vigil.errors import NotFound, ValidationFailed
from vigil.integrations.slack.fake import SlackFake
from vigil.investigations import checkpoints
from vigil.investigations.checkpoints import CheckpointTimeout, TimeoutSource
from vigil.investigations.steps import as_checkpoint
from vigil.orgs import service as orgs_service
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition, SkillStep
from vigil.settings import Settings

ASK = {"name": "Ask the user", "user_email": "{{ entities.emails[0] }}", "question": "Was this you?"}


def _ask_then_analyze(timeout_seconds: int | None = None) -> PlaybookDefinition:
    return PlaybookDefinition(steps=[CheckpointStep(**ASK, timeout_seconds=timeout_seconds), AnalyzeStep(name="AI")])


@pytest.fixture
def env_900(db_url: str, tmp_path: Path, slack_fake: SlackFake) -> Iterator[Checkpointed]:
    """The environment's default left at 15 min, so only a setting closer to the step can make the wait 5 s."""
    settings = engine_settings(db_url, tmp_path, vendor_urls=vendor_urls(slack=slack_fake.api_url))
    assert settings.checkpoint_timeout_seconds == 900
    with running(settings, SlackSide(slack_fake)) as started:
        yield started


def _set_service(chat: Checkpointed, seconds: int | None) -> None:
    with chat.harness.db.write() as session:
        orgs_service.set_service_checkpoint_timeout(session, seconds, actor="admin@vigil.test")


def _set_org(chat: Checkpointed, seconds: int | None) -> None:
    with chat.harness.db.write() as session:
        orgs_service.set_organization_checkpoint_timeout(session, "ACME", seconds)


def _times_out_after(chat: Checkpointed, seconds: int, source: str) -> None:
    """The alert's checkpoint waits `seconds` (not 15 min), records them and their source, and times out."""
    started = time.monotonic()
    alert = chat.post_sign_in()
    chat.question()
    done = chat.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED, timeout=seconds + 30)
    waited = time.monotonic() - started
    assert seconds - 1 <= waited < seconds + 25, waited
    inputs = chat.checkpoint_inputs(alert["alert_uuid"])
    assert (inputs["timeout_seconds"], inputs["timeout_source"]) == (seconds, source)
    assert chat.checkpoint_output(alert["alert_uuid"])["answer"] == "timeout"
    row = checkpoint_row(chat.harness)
    assert row is not None and (row.timeout_seconds, row.timeout_source, row.status) == (seconds, source, "timed_out")
    asked = next(e for e in chat.alert(done["alert_id"])["timeline"] if e["kind"] == "checkpoint_asked")
    assert f"waiting up to {seconds} s" in asked["message"]


def test_environment_default_applies_when_nothing_else_is_set(
    db_url: str, tmp_path: Path, slack_fake: SlackFake
) -> None:
    settings = engine_settings(
        db_url, tmp_path, vendor_urls=vendor_urls(slack=slack_fake.api_url), checkpoint_timeout_seconds=5
    )
    with running(settings, SlackSide(slack_fake)) as chat:
        chat.use_playbook(SIGN_IN_TYPE, _ask_then_analyze())
        _times_out_after(chat, 5, "environment")


def test_console_service_wide_setting_overrides_the_environment(env_900: Checkpointed) -> None:
    _set_service(env_900, 5)
    env_900.use_playbook(SIGN_IN_TYPE, _ask_then_analyze())
    _times_out_after(env_900, 5, "service")


def test_organization_override_beats_the_service_wide_setting(env_900: Checkpointed) -> None:
    _set_service(env_900, 600)
    _set_org(env_900, 5)
    env_900.use_playbook(SIGN_IN_TYPE, _ask_then_analyze())
    _times_out_after(env_900, 5, "organization")


def test_explicit_step_timeout_beats_every_default(env_900: Checkpointed) -> None:
    _set_service(env_900, 600)
    _set_org(env_900, 700)
    env_900.use_playbook(SIGN_IN_TYPE, _ask_then_analyze(timeout_seconds=5))
    _times_out_after(env_900, 5, "step")


def test_checkpoint_written_as_a_skill_step_follows_the_same_rule(env_900: Checkpointed) -> None:
    _set_service(env_900, 600)
    _set_org(env_900, 700)
    skill_step = SkillStep(
        name="Ask", skill="Chat Checkpoint", inputs={"user_email": ASK["user_email"], "question": "Was it you?"}
    )
    env_900.use_playbook(SIGN_IN_TYPE, PlaybookDefinition(steps=[skill_step, AnalyzeStep(name="AI")]))
    alert = env_900.post_sign_in()
    asked = env_900.question()
    env_900.press("confirmed", asked)
    env_900.wait_status(alert["alert_id"], InvestigationStatus.COMPLETED)
    inputs = env_900.checkpoint_inputs(alert["alert_uuid"])
    assert (inputs["timeout_seconds"], inputs["timeout_source"]) == (700, "organization")
    row = checkpoint_row(env_900.harness)
    assert row is not None and row.expires_at is not None and row.created_at + 690 <= row.expires_at


def test_resolution_order_and_clearing(harness: Harness) -> None:
    harness.add_org("ACME")
    with harness.db.read() as session:
        organization = orgs_service.get_organization(session, "ACME")
    org_uuid = organization.organization_uuid

    def resolved(step: int | None = None) -> CheckpointTimeout:
        with harness.db.read() as session:
            return checkpoints.resolve_timeout(session, org_uuid, step, 900)

    assert resolved() == CheckpointTimeout(900, TimeoutSource.ENVIRONMENT)
    with harness.db.write() as session:
        orgs_service.set_service_checkpoint_timeout(session, 600, actor="a@x")
        orgs_service.set_service_checkpoint_timeout(session, 650, actor="b@x")  # an update, not a second row
    assert resolved() == CheckpointTimeout(650, TimeoutSource.SERVICE)
    with harness.db.write() as session:
        orgs_service.set_organization_checkpoint_timeout(session, "acme", 300)
    assert resolved() == CheckpointTimeout(300, TimeoutSource.ORGANIZATION)
    assert resolved(step=42) == CheckpointTimeout(42, TimeoutSource.STEP)
    with harness.db.write() as session:
        orgs_service.set_organization_checkpoint_timeout(session, "ACME", None)
    assert resolved() == CheckpointTimeout(650, TimeoutSource.SERVICE)
    with harness.db.write() as session:
        orgs_service.set_service_checkpoint_timeout(session, None, actor="a@x")
        orgs_service.set_service_checkpoint_timeout(session, None, actor="a@x")  # clearing twice is harmless
    assert resolved() == CheckpointTimeout(900, TimeoutSource.ENVIRONMENT)


@pytest.mark.parametrize("bad", [0, 4, 7 * 24 * 3600 + 1, -5])
def test_out_of_range_timeouts_are_refused_with_the_field_named(harness: Harness, bad: int) -> None:
    harness.add_org("ACME")
    for change in (
        lambda session: orgs_service.set_service_checkpoint_timeout(session, bad, actor="a@x"),
        lambda session: orgs_service.set_organization_checkpoint_timeout(session, "ACME", bad),
    ):
        with pytest.raises(ValidationFailed) as refused, harness.db.write() as session:
            change(session)
        assert refused.value.code == "invalid_checkpoint_timeout"
        assert refused.value.details == [{"field": "checkpoint_timeout_seconds", "value": bad}]
    with harness.db.read() as session:
        assert orgs_service.service_checkpoint_timeout(session) is None
        assert orgs_service.get_organization(session, "ACME").checkpoint_timeout_seconds is None
    with pytest.raises(NotFound), harness.db.write() as session:
        orgs_service.set_organization_checkpoint_timeout(session, "NOPE", 60)


def test_step_timeout_is_optional_and_old_playbooks_keep_theirs() -> None:
    stored_before = {"steps": [{"kind": "checkpoint", **ASK, "timeout_seconds": 900}, {"kind": "analyze", "name": "A"}]}
    assert PlaybookDefinition.model_validate(stored_before).steps[0].timeout_seconds == 900  # type: ignore[union-attr]
    drafted = PlaybookDefinition.model_validate({"steps": [{"kind": "checkpoint", **ASK}]})
    assert drafted.steps[0].timeout_seconds is None  # type: ignore[union-attr]
    with pytest.raises(ValidationError):
        CheckpointStep(**ASK, timeout_seconds=4)
    with pytest.raises(ValidationError):
        Settings(checkpoint_timeout_seconds=4)
    assert Settings().checkpoint_timeout_seconds == 900

    def as_skill(timeout: str) -> int | None:
        step = SkillStep(name="s", skill="Chat Checkpoint", inputs={"user_email": "a@b.c", "timeout_seconds": timeout})
        checkpoint = as_checkpoint(step)
        assert checkpoint is not None
        return checkpoint.timeout_seconds

    assert as_skill("") is None and as_skill("{{ alert.x }}") is None
    assert (as_skill("60"), as_skill("1"), as_skill("99999999")) == (60, 5, 7 * 24 * 3600)


def test_environment_variable_sets_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIGIL_CHECKPOINT_TIMEOUT_SECONDS", "120")
    assert Settings().checkpoint_timeout_seconds == 120
