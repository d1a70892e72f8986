"""Sick vendors: every fault mode of the fakes, hit by real investigations, ends every alert in a bounded time
with a bounded number of requests (issue 14 item 8).

One drill runs every fault mode at once: each mode gets its own alert whose machine id, zone id and email carry a
per-mode token, and each fake answers requests carrying that token with that mode's fault. A "continue" alert calls
Defender, Cloudflare, Push Security, Slack's webhook and a Chat Checkpoint and must end Completed with each failure
recorded as evidence; a "fail" alert (Defender step with on_error: fail) must end Failed with a failure_reason
naming the vendor, after its automatic re-runs.

Bounds, from the engine's settings and the HTTP layer's default RetryPolicy (3 attempts, Retry-After over 120 s not
waited for): a skill call sends at most 3 requests, a step tries it ``skill_retry_attempts`` times (write skills and
the checkpoint question once), an investigation runs ``1 + max_auto_retries`` attempts; a step never outlives
``skill_retry_attempts * (skill_timeout_seconds + backoff)``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.engine.conftest import engine_settings
from tests.fakes.fixtures import CLOUDFLARE_TOKEN_VALUES, MDE_VALUES, push_values, slack_values, vendor_urls
from tests.reliability.record import record
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook
from vigil.alerts.constants import InvestigationStatus
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.fake_faults import Fault, FaultRule
from vigil.integrations.http import RetryPolicy
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.push_security.fake import PushFake
from vigil.integrations.slack.fake import SlackFake
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, OnError, PlaybookDefinition, SkillStep
from vigil.settings import Settings

PROVIDER = "microsoft_defender"
CONTINUE_TYPE = "Fault drill - continue"
FAIL_TYPE = "Fault drill - fail"
HTTP_ATTEMPTS = RetryPolicy().max_attempts
#: The playbook steps that reach each fake in one attempt of a "continue" investigation (the checkpoint question
#: and the webhook post are sent once each: a write is never repeated by the step).
CALLS_PER_ATTEMPT = {"Defender": 1, "Cloudflare": 1, "Push Security": 1, "Slack": 0}
SLACK_ONE_TRY_CALLS = 2


@dataclass(frozen=True)
class Mode:
    label: str
    fault: Fault
    retry_after: str | None = None


MODES = [
    Mode("always 500", Fault.ERROR_500),
    Mode("503 with Retry-After 1", Fault.UNAVAILABLE_503, "1"),
    Mode("429 storm without Retry-After", Fault.RATE_LIMITED),
    Mode("429 storm, Retry-After 100 (under the 120 s cap)", Fault.RATE_LIMITED, "100"),
    Mode("429 storm, Retry-After 10^9", Fault.RATE_LIMITED, "1000000000"),
    Mode("429 storm, Retry-After in year 9999", Fault.RATE_LIMITED, "Fri, 31 Dec 9999 23:59:59 GMT"),
    Mode("never-answering response", Fault.HANG),
    Mode("truncated JSON body", Fault.TRUNCATED_JSON),
    Mode("JSON fields of the wrong type", Fault.WRONG_TYPE_JSON),
    Mode("HTML error page (502)", Fault.HTML_PAGE),
    Mode("slow body (1 byte / 0.5 s)", Fault.SLOW_BODY),
    Mode("connection reset mid-body", Fault.RESET_MID_BODY),
]
FAIL_MODES = [m for m in MODES if m.fault in (Fault.ERROR_500, Fault.HANG, Fault.WRONG_TYPE_JSON, Fault.RESET_MID_BODY)]


@dataclass
class Vendors:
    mde: MdeFake
    cloudflare: CloudflareFake
    push: PushFake
    slack: SlackFake

    def by_name(self) -> dict[str, MdeFake | CloudflareFake | PushFake | SlackFake]:
        return {"Defender": self.mde, "Cloudflare": self.cloudflare, "Push Security": self.push, "Slack": self.slack}

    def clear(self) -> None:
        for fake in self.by_name().values():
            fake.reset()


@pytest.fixture(scope="module")
def vendors() -> Iterator[Vendors]:
    with ExitStack() as stack:
        started = Vendors(MdeFake(), CloudflareFake(), PushFake(), SlackFake())
        for fake in started.by_name().values():
            stack.enter_context(fake.serve())
        yield started


def drill_settings(db_url: str, tmp_path: Path, vendors: Vendors, backend: str) -> Settings:
    return engine_settings(
        db_url,
        tmp_path,
        vendor_urls=vendor_urls(mde=vendors.mde.url, cloudflare=vendors.cloudflare.url, slack=vendors.slack.api_url),
        skill_timeout_seconds=1.5,
        skill_retry_attempts=2,
        skill_retry_backoff_seconds=0.05,
        max_auto_retries=1,
        retry_backoff_seconds=0.2,
        executor_id=f"vendor-faults-{backend}",
    )


def connect_everything(harness: Harness, key: str, vendors: Vendors) -> None:
    auth = {"Authorization": f"Bearer {key}"}
    for integration_id, fields in (
        ("microsoft_defender", MDE_VALUES),
        ("cloudflare", CLOUDFLARE_TOKEN_VALUES),
        ("push_security", push_values(vendors.push)),
        ("slack", slack_values(vendors.slack)),
    ):
        body = {"organization_code": "ACME", "integration_id": integration_id, "name": integration_id, "fields": fields}
        created = harness.client.post("/serviceapi/connections", json=body, headers=auth)
        assert created.status_code == 201, created.text
        tested = harness.client.post(f"/serviceapi/connections/{created.json()['connection_uuid']}/test", headers=auth)
        assert tested.status_code == 200 and tested.json()["ok"] is True, tested.text


def install_playbooks(harness: Harness) -> None:
    machine, email = "{{ entities.device_ids[0] }}", "{{ entities.emails[0] }}"
    every_vendor = PlaybookDefinition(
        steps=[
            SkillStep(name="Defender machine", skill="List Machines", inputs={"machine_id": machine}),
            SkillStep(name="Cloudflare zone", skill="Get Edge Zone Details", inputs={"zone_id": machine}),
            SkillStep(name="Push accounts", skill="Find Account by Email", inputs={"email": email}),
            SkillStep(name="Slack notice", skill="Send Chat Message", inputs={"text": f"Fault drill {machine}"}),
            CheckpointStep(name="Ask the user", user_email=email, question="Was this you?"),
            AnalyzeStep(name="Verdict"),
        ]
    )
    must_succeed = PlaybookDefinition(
        steps=[
            SkillStep(
                name="Defender machine", skill="List Machines", inputs={"machine_id": machine}, on_error=OnError.FAIL
            ),
            AnalyzeStep(name="Verdict"),
        ]
    )
    install_playbook(harness.db, "ACME", PROVIDER, CONTINUE_TYPE, every_vendor)
    install_playbook(harness.db, "ACME", PROVIDER, FAIL_TYPE, must_succeed)


def drill_token(kind: str, mode: Mode) -> str:
    """40 hex characters: a Defender machine id, a Cloudflare zone id and an email's local part at once."""
    return hashlib.sha1(f"{kind}:{mode.label}".encode()).hexdigest()


def post(harness: Harness, key: str, alert_type: str, token: str) -> str:
    content = json.dumps({"title": "Fault drill", "machineId": token, "userPrincipalName": f"{token}@faults.example"})
    body = harness.alert_body(provider=PROVIDER, alert_type=alert_type, alert_content=content)
    response = harness.post_alert(key, body)
    assert response.status_code == 201, response.text
    alert_id: str = response.json()["alert_id"]
    return alert_id


def attempt_bound(settings: Settings, skill_steps: int, one_try_steps: int) -> float:
    """The longest one attempt may run: every skill step's tries each cut at the skill timeout, plus backoffs."""
    backoff: float = sum(settings.skill_retry_backoff_seconds * 2**n for n in range(settings.skill_retry_attempts - 1))
    per_skill_step = settings.skill_retry_attempts * settings.skill_timeout_seconds + backoff
    return skill_steps * per_skill_step + one_try_steps * settings.skill_timeout_seconds


@dataclass
class Outcome:
    alert: dict[str, Any]
    ended_after: float
    evidence: list[dict[str, Any]]


def wait_all_ended(harness: Harness, key: str, alert_ids: list[str], bound: float) -> dict[str, Outcome]:
    """Poll until every alert is Completed, or Failed with no automatic re-run following, or the bound passes.

    A Failed alert has ended once it stays Failed (same retry count) past the re-run delay, or has used every re-run.
    """
    auth = {"Authorization": f"Bearer {key}"}
    settings = harness.settings
    started, ended = time.monotonic(), dict[str, Outcome]()
    failed_since: dict[tuple[str, int], float] = {}
    deadline = started + bound
    while time.monotonic() < deadline and len(ended) < len(alert_ids):
        for alert_id in [a for a in alert_ids if a not in ended]:
            alert = harness.client.get(f"/serviceapi/alerts/{alert_id}", headers=auth).json()
            status, retries = alert["investigation_status"], alert["investigation_retry_count"]
            if status == InvestigationStatus.FAILED:
                since = failed_since.setdefault((alert_id, retries), time.monotonic())
                rerun_delay = settings.retry_backoff_seconds * 2**retries + 3.0
                if retries < settings.max_auto_retries and time.monotonic() - since < rerun_delay:
                    continue
                ended[alert_id] = Outcome(alert, since - started, [])
            elif status == InvestigationStatus.COMPLETED:
                case = harness.client.get(f"/serviceapi/cases/{alert['case_id']}", headers=auth).json()
                ended[alert_id] = Outcome(alert, time.monotonic() - started, case["evidence"])
        time.sleep(0.2)
    return ended


def vendor_errors(outcome: Outcome) -> dict[str, str]:
    """Step name → recorded error, for the steps that failed."""
    return {e["name"]: e["error"] or "" for e in outcome.evidence if e["status"] == "error"}


EXPECTED_VENDOR_WORDS = {
    "Defender machine": "Defender",
    "Cloudflare zone": "Cloudflare",
    "Push accounts": "Push Security",
    "Slack notice": "Slack",
    "Ask the user": "Slack",
}
#: A Slack incoming webhook answers a plain-text "ok": any 200, whatever its body, means the message was posted.
WEBHOOK_ACCEPTS = (Fault.TRUNCATED_JSON, Fault.WRONG_TYPE_JSON)


def expected_failures(mode: Mode) -> dict[str, str]:
    """The steps of the "continue" playbook that must fail under ``mode``, each with the vendor its error names."""
    if mode.fault in WEBHOOK_ACCEPTS:
        return {step: word for step, word in EXPECTED_VENDOR_WORDS.items() if step != "Slack notice"}
    return EXPECTED_VENDOR_WORDS


def run_drill(
    db_url: str, backend: str, tmp_path: Path, vendors: Vendors, *, copies: int, concurrency: int, long: bool
) -> None:
    """Post ``copies`` alerts per (playbook, mode), all at once, to an engine running ``concurrency`` of them at a
    time; record each mode's result (over its copies) and assert every one held."""
    vendors.clear()
    settings = drill_settings(db_url, tmp_path, vendors, backend).model_copy(update={"worker_concurrency": concurrency})
    continue_bound = attempt_bound(settings, skill_steps=3, one_try_steps=2)
    fail_bound = (settings.max_auto_retries + 1) * attempt_bound(settings, skill_steps=1, one_try_steps=0)
    fail_bound += sum(settings.retry_backoff_seconds * 2**n for n in range(settings.max_auto_retries))
    waves = -(-copies * (len(MODES) + len(FAIL_MODES)) // concurrency)
    # The engine's own steps, the builtin analyst and the polling add seconds on a loaded 2-core machine.
    bound = waves * max(continue_bound, fail_bound) + 20.0
    rules: dict[tuple[str, str], list[FaultRule]] = {}
    alerts: dict[tuple[str, str], list[str]] = {}
    with Harness(settings, engine=True) as harness:
        harness.add_org("ACME")
        key = harness.add_key("ACME").api_key
        connect_everything(harness, key, vendors)
        install_playbooks(harness)
        for kind, modes in (("continue", MODES), ("fail", FAIL_MODES)):
            for mode in modes:
                for copy in range(copies):
                    token = drill_token(f"{kind}:{copy}", mode)
                    rules.setdefault((kind, mode.label), []).extend(
                        fake.inject(mode.fault, match=token, retry_after=mode.retry_after)
                        for fake in vendors.by_name().values()
                    )
                    alert_type = CONTINUE_TYPE if kind == "continue" else FAIL_TYPE
                    alerts.setdefault((kind, mode.label), []).append(post(harness, key, alert_type, token))
        try:
            ended = wait_all_ended(harness, key, [a for ids in alerts.values() for a in ids], bound)
        finally:
            vendors.clear()  # lets go of hung requests and trickling bodies

    problems: list[str] = []
    names = list(vendors.by_name())
    for (kind, label), alert_ids in alerts.items():
        caught = {name: sum(r.hits for r in rules[(kind, label)][i :: len(names)]) for i, name in enumerate(names)}
        attempts = 1 if kind == "continue" else settings.max_auto_retries + 1
        tries = settings.skill_retry_attempts
        limit = {name: copies * HTTP_ATTEMPTS * tries * n * attempts for name, n in CALLS_PER_ATTEMPT.items()}
        limit["Slack"] = copies * HTTP_ATTEMPTS * SLACK_ONE_TRY_CALLS if kind == "continue" else 0
        over = {name: (caught[name], limit[name]) for name in caught if caught[name] > limit[name]}
        verdicts = [judge(kind, label, ended.get(alert_id), bound) for alert_id in alert_ids]
        held = not over and all(ok for ok, _ in verdicts)
        worst = next((text for ok, text in verdicts if not ok), verdicts[-1][1])
        detail = f"{len(alert_ids)} alert(s): {worst}; requests caught {caught} (limits {limit})"
        record(
            f"Vendor fault ({kind} playbook): {label}",
            sum(caught.values()),
            "requests",
            held,
            detail,
            backend=backend,
            long=long,
        )
        if not held:
            problems.append(f"{kind} / {label}: {detail}")
    assert not problems, "\n".join(problems)


def judge(kind: str, label: str, outcome: Outcome | None, bound: float) -> tuple[bool, str]:
    """Whether one alert ended as its playbook must under the mode, and what it did."""
    if outcome is None:
        return False, f"NOT ENDED within {bound:.0f} s"
    alert = outcome.alert
    status = InvestigationStatus(alert["investigation_status"]).name
    text = f"{status} after {outcome.ended_after:.1f} s (bound {bound:.0f} s)"
    if kind == "fail":
        reason = alert["failure_reason"] or ""
        return status == "FAILED" and "Defender" in reason, f"{text}; failure_reason {reason!r}"
    errors = vendor_errors(outcome)
    mode = next(m for m in MODES if m.label == label)
    missing = {s: errors.get(s) for s, word in expected_failures(mode).items() if word not in errors.get(s, "")}
    return status == "COMPLETED" and not missing, f"{text}; steps without a vendor-named error: {missing or 'none'}"


def test_every_fault_mode_ends_every_investigation_with_bounded_requests(
    db_url: str, backend: str, tmp_path: Path, vendors: Vendors
) -> None:
    run_drill(db_url, backend, tmp_path, vendors, copies=1, concurrency=len(MODES) + len(FAIL_MODES), long=False)


@pytest.mark.reliability_long
def test_fault_storm_with_a_full_queue_ends_every_investigation(
    db_url: str, backend: str, tmp_path: Path, vendors: Vendors
) -> None:
    """Five alerts per mode (80) against the default 8 concurrent investigations: the storm lasts minutes, the
    queue stays full, and still every alert ends within its wave's bound and no fake sees unbounded retries."""
    run_drill(db_url, backend, tmp_path, vendors, copies=5, concurrency=8, long=True)
