"""Benchmark: the investigation engine on PostgreSQL with `vigil worker` processes and loopback vendor fakes.

Topology: a private PostgreSQL database migrated by Vigil; the API in this process (the ASGI app without an
engine, so every investigation runs in the worker processes being measured); 1 or 2 `vigil worker` processes,
each with its own ``--id``; the Defender, Cloudflare and Slack fakes on loopback ports with a latency knob
(``FakeVendor.latency_seconds``). Alerts enter through ``POST /serviceapi/alerts/batch``.

Figures:
* investigations completed/s, from the first workflow enqueued (Submitted) to the last finished, taken from
  DBOS's own millisecond timestamps (``dbos.workflow_status``), with 0 ms and 50 ms vendor latency, 1 and 2
  workers; and the 2-worker / 1-worker ratio;
* engine overhead per investigation: the workflow's run time (dequeued → finished) minus the time inside its
  playbook's skill calls (``investigation_steps.duration_ms``), p50, at 50 ms vendor latency on one worker;
* checkpoint resume: a signed Slack button press (E5) posted → the playbook's next step started in the worker
  (``dbos.operation_outputs.started_at_epoch_ms``), p50;
* the worker's RSS after it has run 10,000 investigations (smoke: a few dozen).

    .venv/bin/python -m bench.investigations [--smoke] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet
from dbos import DBOSClient, EnqueueOptions
from sqlalchemy import select, text
from tests.fakes.fixtures import CLOUDFLARE_TOKEN_VALUES, MDE_VALUES, slack_values, vendor_urls
from tests.slack.checkpointing import ASKED_ID, buttons_of, sign_in_content
from tests.support.harness import Harness
from tests.support.playbooks import install_playbook

from bench.alerts_page import admin_url, percentile, pg_admin
from bench.report import Figure, number
from vigil.db.migrate import upgrade
from vigil.integrations.cloudflare.fake import CloudflareFake
from vigil.integrations.microsoft_defender import fake as mde
from vigil.integrations.microsoft_defender.fake import MdeFake
from vigil.integrations.slack.fake import SlackFake
from vigil.integrations.slack.fake_sender import SlackSender, button_press
from vigil.investigations.models import ChatCheckpoint, WorkerHeartbeat
from vigil.investigations.workflow import QUEUE_NAME
from vigil.playbooks.schemas import AnalyzeStep, CheckpointStep, PlaybookDefinition, SkillStep
from vigil.settings import Settings

VIGIL = str(Path(sys.executable).with_name("vigil"))
SECTION = "Investigation engine (PostgreSQL)"
ORG, CHAT_ORG = "ACME", "CHAT"
PROVIDER, ALERT_TYPE, CHAT_TYPE = "microsoft_defender", "Suspicious process on endpoint", "Suspicious sign-in"
BATCH = 500
FINISHED = (15, 20)
#: The playbook every measured investigation runs: two vendor calls, Vigil's own lookup, the verdict.
PLAYBOOK = PlaybookDefinition(
    steps=[
        SkillStep(name="Machine details", skill="List Machines", inputs={"machine_id": "{{ entities.device_ids[0] }}"}),
        SkillStep(
            name="Edge audit trail",
            skill="Edge Get Account Audit Logs for Detections",
            inputs={"actor_email": "{{ entities.emails[0] }}"},
        ),
        SkillStep(name="Related alerts", skill="Look up related alerts"),
        AnalyzeStep(name="Verdict"),
    ]
)
#: The checkpoint playbook: ask in Slack, then the step whose start the resume figure times.
CHAT_PLAYBOOK = PlaybookDefinition(
    steps=[
        CheckpointStep(name="Ask the user", user_email="{{ entities.emails[0] }}", question="Was this you?"),
        SkillStep(name="Related alerts", skill="Look up related alerts"),
        AnalyzeStep(name="Verdict"),
    ]
)


@dataclass(frozen=True)
class Sizes:
    """How much work each figure gets: tiny in smoke mode, within the time budget in full mode."""

    throughput_alerts: int
    overhead_waves: int
    checkpoints: int
    memory_investigations: int


SMOKE = Sizes(throughput_alerts=10, overhead_waves=2, checkpoints=2, memory_investigations=60)
#: 10,000 investigations take one worker 6-9 minutes on the 2-core machines of this project, more than the
#: 7-minute budget of the whole full run: by default the worker's RSS is read up to 3,000 and the growth per
#: 1,000 is reported; VIGIL_BENCH_MEMORY_INVESTIGATIONS=10000 runs the whole 10,000.
FULL = Sizes(
    throughput_alerts=200,
    overhead_waves=12,
    checkpoints=10,
    memory_investigations=int(os.environ.get("VIGIL_BENCH_MEMORY_INVESTIGATIONS", "3000")),
)
#: Alerts per paced wave of the overhead figure: one, so no investigation shares the worker with another.
WAVE = 1


def defender_alert(n: int) -> str:
    """A Defender alert naming the fake's first machine and a per-alert user, so both skills have inputs."""
    return json.dumps(
        {
            "id": f"da{n:012d}",
            "title": "Suspicious process launched",
            "severity": "Medium",
            "category": "Execution",
            "machineId": mde.MACHINES[0]["id"],
            "computerDnsName": mde.MACHINES[0]["computerDnsName"],
            "userPrincipalName": f"user{n}@acme.example",
            "ipAddress": f"203.0.113.{n % 250 + 1}",
        }
    )


class Fakes:
    """The vendor fakes this benchmark calls, served on loopback for the whole run."""

    def __init__(self, stack: ExitStack) -> None:
        self.mde = MdeFake()
        self.cloudflare = CloudflareFake()
        self.slack = SlackFake()
        for fake in (self.mde, self.cloudflare, self.slack):
            stack.enter_context(fake.serve())

    def latency(self, seconds: float) -> None:
        """Set the vendor latency and drop recorded requests (they would only grow this process)."""
        for fake in (self.mde, self.cloudflare, self.slack):
            fake.requests.clear()
            fake.latency_seconds = seconds


class Rig:
    """A private database with the API in this process and `vigil worker` processes on it."""

    def __init__(self, fakes: Fakes, workdir: Path) -> None:
        self.fakes = fakes
        self.workdir = workdir
        self.name = f"vigil_bench_inv_{uuid.uuid4().hex[:10]}"
        self.url = admin_url(self.name)
        urls = vendor_urls(mde=fakes.mde.url, cloudflare=fakes.cloudflare.url, slack=fakes.slack.api_url)
        self.env = {
            "VIGIL_DATABASE_URL": self.url,
            "VIGIL_SECRET_KEY": Fernet.generate_key().decode(),
            "VIGIL_VENDOR_URLS": json.dumps(urls),  # the worker processes call the fakes too
            "VIGIL_LOG_LEVEL": "WARNING",
            "VIGIL_OUTBOUND_ALLOWED_HOSTS": "127.0.0.1",  # the loopback fakes stand in for the vendors
        }
        self.settings = Settings(
            database_url=self.url,
            data_dir=workdir / "api",
            secret_key=self.env["VIGIL_SECRET_KEY"],
            vendor_urls=urls,
            outbound_allowed_hosts=[self.env["VIGIL_OUTBOUND_ALLOWED_HOSTS"]],
            rate_limit_per_second=100_000,
            rate_limit_burst=100_000,
        )
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.sent = 0
        self.client: DBOSClient | None = None

    @contextmanager
    def running(self) -> Iterator[Rig]:
        pg_admin(f"CREATE DATABASE {self.name}")
        try:
            self.harness = Harness(self.settings)
            upgrade(self.harness.db.engine)
            with self.harness:
                self._tenants()
                try:
                    yield self
                finally:
                    self.stop_workers()
                    if self.client is not None:
                        self.client.destroy()
        finally:
            pg_admin(f"DROP DATABASE IF EXISTS {self.name} WITH (FORCE)")

    # -- set-up ----------------------------------------------------------------------------------------------

    def _tenants(self) -> None:
        """Both organizations, their connections (created and tested through the API) and pinned playbooks."""
        self.harness.add_org(ORG)
        self.harness.add_org(CHAT_ORG)
        self.key = self.harness.add_key(ORG, CHAT_ORG).api_key
        self._connect(ORG, "microsoft_defender", "defender", MDE_VALUES)
        self._connect(ORG, "cloudflare", "cloudflare", CLOUDFLARE_TOKEN_VALUES)
        self.slack_token = self._connect(CHAT_ORG, "slack", "slack", slack_values(self.fakes.slack))["webhook_token"]
        install_playbook(self.harness.db, ORG, PROVIDER, ALERT_TYPE, PLAYBOOK)
        install_playbook(self.harness.db, CHAT_ORG, "okta", CHAT_TYPE, CHAT_PLAYBOOK)

    def _connect(self, org: str, integration: str, name: str, values: dict[str, str]) -> dict[str, Any]:
        auth = {"Authorization": f"Bearer {self.key}"}
        body = {"organization_code": org, "integration_id": integration, "name": name, "fields": values}
        created = self.harness.client.post("/serviceapi/connections", json=body, headers=auth)
        assert created.status_code == 201, created.text
        connection: dict[str, Any] = created.json()
        tested = self.harness.client.post(f"/serviceapi/connections/{connection['connection_uuid']}/test", headers=auth)
        assert tested.status_code == 200 and tested.json()["ok"] is True, tested.text
        return connection

    # -- workers ---------------------------------------------------------------------------------------------

    def start_workers(self, count: int) -> list[str]:
        """Start `count` fresh `vigil worker` processes (own executor id each) and wait for their heartbeats."""
        self.stop_workers()
        names = [f"bench-{uuid.uuid4().hex[:6]}-{n}" for n in range(count)]
        for name in names:
            log = (self.workdir / f"{name}.log").open("wb")
            env = {**os.environ, **self.env, "VIGIL_DATA_DIR": str(self.workdir / name), "VIGIL_EXECUTOR_ID": name}
            self.workers[name] = subprocess.Popen(
                [VIGIL, "worker", "--id", name], env=env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 60
        while True:
            with self.harness.db.read() as session:
                alive = set(session.scalars(select(WorkerHeartbeat.name)))
            if set(names) <= alive:
                return names
            if any(p.poll() is not None for p in self.workers.values()) or time.monotonic() > deadline:
                raise RuntimeError(f"workers did not start; see {self.workdir}/*.log")
            time.sleep(0.1)

    def stop_workers(self) -> None:
        for process in self.workers.values():
            process.send_signal(signal.SIGTERM)
        for process in self.workers.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.workers.clear()

    def rss_mb(self, name: str) -> float:
        """Resident set size of a worker process, from /proc."""
        for line in Path(f"/proc/{self.workers[name].pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the worker processes have used so far: per investigation, the figure least
        moved by what else runs on the machine."""
        total = 0
        for process in self.workers.values():
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        return total / os.sysconf("SC_CLK_TCK")

    # -- load ------------------------------------------------------------------------------------------------

    def send(self, count: int) -> list[str]:
        """Post `count` typed alerts through the batch endpoint; returns their uuids (= attempt-0 workflow ids)."""
        uuids: list[str] = []
        auth = {"Authorization": f"Bearer {self.key}"}
        while len(uuids) < count:
            alerts = [
                {
                    "organization_code": ORG,
                    "alert_provider": PROVIDER,
                    "alert_type": ALERT_TYPE,
                    "alert_content": defender_alert(self.sent + n),
                }
                for n in range(min(BATCH, count - len(uuids)))
            ]
            self.sent += len(alerts)
            response = self.harness.client.post("/serviceapi/alerts/batch", json={"alerts": alerts}, headers=auth)
            assert response.status_code == 200 and response.json()["failed"] == 0, response.text[:500]
            uuids += [item["alert"]["alert_uuid"] for item in response.json()["results"]]
        return uuids

    def wait_finished(self, uuids: list[str], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        query = text("SELECT count(*) FROM alerts WHERE investigation_status IN (15, 20) AND alert_uuid = ANY(:u)")
        ids = [uuid.UUID(u) for u in uuids]
        while True:
            with self.harness.db.read() as session:
                done = session.execute(query, {"u": ids}).scalar_one()
            if done == len(uuids):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{done}/{len(uuids)} investigations finished in {timeout:.0f} s")
            if any(p.poll() is not None for p in self.workers.values()):
                raise RuntimeError(f"a worker exited; see {self.workdir}/*.log")
            time.sleep(0.1)

    def enqueue(self, uuids: list[str]) -> None:
        """Put attempt 0 of these alerts on the queue at once, as an API process with an engine would after E1.

        Intake here has no engine to wake, so the workers' submitters would find them only at their next idle
        scan (2 s); the workflow ids are the ones the submitter uses, so its later enqueue is a no-op.
        """
        if self.client is None:
            self.client = DBOSClient(system_database_url=self.url)
        for alert_uuid in uuids:
            options: EnqueueOptions = {
                "queue_name": QUEUE_NAME,
                "workflow_name": "vigil.investigate",
                "workflow_id": alert_uuid,
            }
            self.client.enqueue(options, alert_uuid, 0)

    def failed(self, uuids: list[str]) -> int:
        query = text("SELECT count(*) FROM alerts WHERE investigation_status = 20 AND alert_uuid = ANY(:u)")
        with self.harness.db.read() as session:
            return int(session.execute(query, {"u": [uuid.UUID(u) for u in uuids]}).scalar_one())

    def throughput(self, uuids: list[str]) -> float:
        """Investigations/s from the first workflow enqueued to the last one finished (DBOS's ms timestamps)."""
        query = text(
            "SELECT min(created_at), max(coalesce(completed_at, updated_at)) "
            "FROM dbos.workflow_status WHERE workflow_uuid = ANY(:w)"
        )
        with self.harness.db.read() as session:
            first, last = session.execute(query, {"w": uuids}).one()
        return len(uuids) / max(float(last - first) / 1000, 1e-3)

    def overheads_ms(self, uuids: list[str]) -> list[tuple[float, float]]:
        """Per investigation: (enqueued → finished minus the time inside its skill steps, of which queue wait)."""
        query = text(
            "SELECT coalesce(w.completed_at, w.updated_at) - w.created_at, w.started_at_epoch_ms - w.created_at, "
            "(SELECT coalesce(sum(s.duration_ms), 0) FROM investigation_steps s "
            " WHERE s.alert_uuid = CAST(w.workflow_uuid AS uuid) AND s.kind = 'skill') "
            "FROM dbos.workflow_status w WHERE w.workflow_uuid = ANY(:w)"
        )
        with self.harness.db.read() as session:
            rows = session.execute(query, {"w": uuids}).all()
        return [(float(total - skills), float(waited)) for total, waited, skills in rows]

    def step_breakdown(self, uuids: list[str]) -> dict[str, float]:
        """Median ms per DBOS step name over these workflows: where an investigation's time goes."""
        query = text(
            "SELECT function_name, completed_at_epoch_ms - started_at_epoch_ms FROM dbos.operation_outputs "
            "WHERE workflow_uuid = ANY(:w) AND completed_at_epoch_ms IS NOT NULL"
        )
        with self.harness.db.read() as session:
            rows = session.execute(query, {"w": uuids}).all()
        by_name: dict[str, list[float]] = {}
        for name, ms in rows:
            by_name.setdefault(name, []).append(float(ms))
        return {name: statistics.median(values) for name, values in sorted(by_name.items())}

    # -- checkpoint ------------------------------------------------------------------------------------------

    def checkpoint_resume_ms(self) -> float:
        """One alert asks in Slack; a signed button press goes to E5; ms until the next step starts."""
        before = {key for key, message in self.fakes.slack.messages.items() if buttons_of(message)}
        body = self.harness.alert_body(org=CHAT_ORG, provider="okta", alert_type=CHAT_TYPE)
        body["alert_content"] = sign_in_content(self.sent % 250 + 1)
        self.sent += 1
        posted = self.harness.post_alert(self.key, body)
        assert posted.status_code == 201, posted.text
        alert_uuid = uuid.UUID(posted.json()["alert_uuid"])
        deadline = time.monotonic() + 60
        while True:
            asked = {key for key, message in self.fakes.slack.messages.items() if buttons_of(message)} - before
            with self.harness.db.read() as session:
                row = session.scalar(
                    select(ChatCheckpoint).where(
                        ChatCheckpoint.alert_uuid == alert_uuid, ChatCheckpoint.status == "waiting"
                    )
                )
                workflow_id = row.waiting_workflow_id if row is not None else None
            if asked and workflow_id is not None and self._has_started(workflow_id):
                break
            if time.monotonic() > deadline:
                raise TimeoutError("the checkpoint question was not asked")
            time.sleep(0.05)
        channel, ts = asked.pop()
        payload = button_press(self.fakes.slack.messages[(channel, ts)], "confirmed", channel=channel, user_id=ASKED_ID)
        pressed = time.time() * 1000
        response = SlackSender(self.harness.client).interaction(self.slack_token, payload)
        assert response.status_code == 200, response.text
        query = text(
            "SELECT started_at_epoch_ms FROM dbos.operation_outputs "
            "WHERE workflow_uuid = :w AND function_name = 'vigil.run_step'"
        )
        while True:
            with self.harness.db.read() as session:
                started = session.execute(query, {"w": workflow_id}).scalar()
            if started is not None:
                return float(started - pressed)
            if time.monotonic() > deadline + 60:
                raise TimeoutError("the investigation did not resume after the answer")
            time.sleep(0.02)

    def _has_started(self, workflow_id: str) -> bool:
        """The waiting workflow exists and sits in its wait (its first step, reading the row, is recorded)."""
        query = text("SELECT count(*) FROM dbos.operation_outputs WHERE workflow_uuid = :w")
        with self.harness.db.read() as session:
            return bool(session.execute(query, {"w": workflow_id}).scalar_one())


def _note_load() -> str:
    one, five, _ = os.getloadavg()
    return f"load avg {one:.1f}/{five:.1f} on {os.cpu_count()} cores"


def run(smoke: bool, runs: int) -> list[Figure]:
    """Every engine figure, each over `runs` runs; smoke mode is a tiny, fast version of the same."""
    sizes = SMOKE if smoke else FULL
    rates: dict[tuple[int, int], Figure] = {}
    overhead = Figure(
        SECTION, "Engine overhead per investigation, p50 (enqueued → completed − skill time)", "ms", target="≤ 150"
    )
    resume = Figure(SECTION, "Checkpoint resume: signed Slack press → next step started, p50", "ms", target="≤ 1,000")
    memory = Figure(SECTION, "", "MB", target="≤ 300")
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="vigil-bench-inv-")))
        fakes = Fakes(stack)
        rig = stack.enter_context(Rig(fakes, workdir).running())
        for workers in (1, 2):
            names = rig.start_workers(workers)  # the latency is the fakes', so one start serves both
            for latency_ms in (0, 50):
                fakes.latency(latency_ms / 1000)
                rates[(workers, latency_ms)] = _throughput(rig, workers, latency_ms, sizes, runs)
            if workers == 1:
                fakes.latency(0.05)
                _overhead(rig, sizes, runs, overhead)
                fakes.latency(0)
                _memory(rig, names[0], sizes, runs, memory)
        fakes.latency(0)
        samples = [[rig.checkpoint_resume_ms() for _ in range(sizes.checkpoints)] for _ in range(runs)]
        resume.runs = [percentile(s, 0.5) for s in samples]
        resume.note = f"{sizes.checkpoints} presses per run, 2 workers idle otherwise; {_note_load()}"
        resume.judge_at_most(1000)
    scaling = Figure(SECTION, "2 workers ÷ 1 worker, 0 ms fakes", "×", target="≥ 1.6")
    one, two = rates[(1, 0)].runs, rates[(2, 0)].runs
    scaling.runs = [b / a for a, b in zip(sorted(one), sorted(two), strict=False) if a]
    scaling.note = f"runs paired by rank (slowest with slowest); {os.cpu_count()} cores for workers, PostgreSQL, API"
    scaling.judge_at_least(1.6)
    return [*rates.values(), scaling, overhead, resume, memory]


def _throughput(rig: Rig, workers: int, latency_ms: int, sizes: Sizes, runs: int) -> Figure:
    """Completed/s of batches of `throughput_alerts` posted at once (the workers saturated)."""
    figure = Figure(
        SECTION,
        f"Investigations/s, {workers} worker{'s' if workers > 1 else ''}, {latency_ms} ms fakes",
        "inv/s",
        target="≥ 40" if latency_ms == 0 else "",
    )
    failed = 0
    breakdown: dict[str, float] = {}
    cpu = rig.cpu_seconds()
    for _ in range(runs):
        uuids = rig.send(sizes.throughput_alerts)
        rig.wait_finished(uuids, timeout=600)
        failed += rig.failed(uuids)
        figure.runs.append(rig.throughput(uuids))
        breakdown = rig.step_breakdown(uuids)
    cpu_ms = (rig.cpu_seconds() - cpu) * 1000 / (runs * sizes.throughput_alerts)
    figure.note = (
        f"{sizes.throughput_alerts} alerts per run; {_note_load()}; worker CPU {number(cpu_ms)} ms per "
        "investigation; median step ms "
        + ", ".join(f"{name.removeprefix('vigil.')} {number(ms)}" for name, ms in breakdown.items())
        + (f"; {failed} failed" if failed else "")
    )
    if latency_ms == 0:
        figure.judge_at_least(40)
    return figure


def _overhead(rig: Rig, sizes: Sizes, runs: int, overhead: Figure) -> None:
    """Paced waves of `WAVE` alert(s), enqueued as they arrive, at 50 ms vendor latency on one worker: the
    engine's own time per investigation when it is not queueing behind a backlog or sharing the CPU."""
    waits: list[float] = []
    runs_only: list[float] = []
    for _ in range(runs):
        samples: list[float] = []
        for _ in range(sizes.overhead_waves):
            uuids = rig.send(WAVE)
            rig.enqueue(uuids)
            rig.wait_finished(uuids, timeout=120)
            measured = rig.overheads_ms(uuids)
            samples += [total for total, _ in measured]
            waits += [waited for _, waited in measured]
            runs_only += [total - waited for total, waited in measured]
        overhead.runs.append(percentile(samples, 0.5))
    overhead.note = (
        f"1 worker, 50 ms fakes, {sizes.overhead_waves} waves of {WAVE} alerts per run; of it waiting in the "
        f"queue (poll {Settings().queue_poll_seconds:g} s) p50 {number(percentile(waits, 0.5))} ms, dequeued → "
        f"completed − skill time p50 {number(percentile(runs_only, 0.5))} ms; {_note_load()}"
    )
    overhead.judge_at_most(150)


def _memory(rig: Rig, name: str, sizes: Sizes, runs: int, memory: Figure) -> None:
    """Run the one worker up to `memory_investigations` in all, reading its RSS at equal steps on the way.

    The figure's runs are the RSS at the last `runs` readings, so a leak shows as growth between them; the note
    gives every reading and the growth per 1,000 investigations over the second half.
    """
    done = 2 * runs * sizes.throughput_alerts + runs * sizes.overhead_waves * WAVE  # this worker's so far
    remaining = max(runs, sizes.memory_investigations - done)
    chunk = max(1, remaining // (2 * runs))
    readings: list[tuple[int, float]] = []
    while remaining > 0:
        uuids = rig.send(min(chunk, remaining))
        rig.wait_finished(uuids, timeout=600)
        remaining -= len(uuids)
        done += len(uuids)
        readings.append((done, rig.rss_mb(name)))
    memory.runs = [rss for _, rss in readings[-runs:]]
    half = readings[len(readings) // 2 :]
    (first_done, first_rss), (last_done, last_rss) = half[0], half[-1]
    memory.name = f"Worker RSS after {done:,} investigations (1 worker)"
    memory.note = "RSS on the way: " + ", ".join(f"{n:,}: {number(rss)}" for n, rss in readings)
    if last_done - first_done >= 500:  # a slope over fewer says nothing
        growth = (last_rss - first_rss) / (last_done - first_done) * 1000
        memory.note += f"; {growth:+.1f} MB per 1,000 over the second half"
    memory.judge_at_most(300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    # SIGTERM as an exit, so the workers are stopped and the private database dropped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    for figure in run(args.smoke, args.runs):
        runs = ", ".join(number(r) for r in figure.runs)
        print(f"{figure.name}: {number(figure.median)} {figure.unit} [{runs}] target {figure.target} met={figure.met}")
        if figure.note:
            print(f"    {figure.note}")
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
