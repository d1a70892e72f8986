"""Prometheus metrics, defined once per process and exposed at /metrics."""

from collections.abc import Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Metric, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

HTTP_REQUEST_SECONDS = Histogram(
    "vigil_http_request_duration_seconds",
    "HTTP request latency by method, route template and status.",
    ["method", "route", "status"],
)
ALERTS_INGESTED = Counter("vigil_alerts_ingested_total", "Alerts accepted by intake.", ["alert_provider"])
INTAKE_REJECTED = Counter(
    "vigil_intake_rejected_total", "Intake requests or batch items rejected, by error code.", ["code"]
)


@dataclass(frozen=True)
class AiUsage:
    """One group of AI exchanges: an organization's model requests (or tool calls) with one outcome."""

    organization: str
    model: str
    kind: str
    outcome: str
    count: int
    input_tokens: int
    output_tokens: int
    cost_usd: float


def ai_usage_exposition(rows: Iterable[AiUsage], investigations: Iterable[tuple[str, str, int]]) -> bytes:
    """AI usage per organization and model, read from the database at scrape time so every worker's calls count
    (a worker's in-process counters would be invisible to the API process serving /metrics)."""
    registry = CollectorRegistry()
    tokens = Counter("vigil_ai_tokens", "Model tokens used.", ["organization", "model", "direction"], registry=registry)
    requests = Counter(
        "vigil_ai_model_requests", "Model requests by outcome.", ["organization", "model", "outcome"], registry=registry
    )
    tools = Counter(
        "vigil_ai_tool_calls",
        "Follow-up skill calls the model made, by outcome.",
        ["organization", "outcome"],
        registry=registry,
    )
    cost = Counter(
        "vigil_ai_cost_usd",
        "Estimated model cost (public prices; local models count 0).",
        ["organization", "model"],
        registry=registry,
    )
    investigated = Counter(
        "vigil_ai_investigations",
        "Investigations (attempts) that called a model.",
        ["organization", "model"],
        registry=registry,
    )
    for row in rows:
        if row.kind == "model":
            tokens.labels(row.organization, row.model, "input").inc(row.input_tokens)
            tokens.labels(row.organization, row.model, "output").inc(row.output_tokens)
            requests.labels(row.organization, row.model, row.outcome).inc(row.count)
            cost.labels(row.organization, row.model).inc(row.cost_usd)
        else:
            tools.labels(row.organization, row.outcome).inc(row.count)
    for organization, model, count in investigations:
        investigated.labels(organization, model).inc(count)
    return generate_latest(registry)


#: Investigation duration buckets (seconds): automated runs take seconds to minutes; a run that waits for a person
#: in chat takes up to its checkpoint timeout (15 min by default, hours when a playbook or organization says so).
DURATION_BUCKETS: tuple[int, ...] = (10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400)
#: The window of the finished statuses, the duration histogram and the skill errors (alerts received in the last
#: 24 h): bounded scans through the created_at index (see investigations/metrics.py).
RECENT_WINDOW_SECONDS = 86_400


@dataclass(frozen=True)
class QueueGroup:
    """Alerts of one organization waiting in one status for their investigation to start."""

    organization: str
    status: str
    count: int
    oldest_created_at: int


@dataclass(frozen=True)
class DurationWindow:
    """Created → completed durations of the window's completed investigations, bucketed in SQL.

    `cumulative[i]` counts durations ≤ `DURATION_BUCKETS[i]` (Prometheus buckets are cumulative)."""

    cumulative: tuple[int, ...]
    count: int
    total_seconds: float


@dataclass(frozen=True)
class SkillErrors:
    """Failed skill calls of one skill within the window, for one cause."""

    integration: str
    skill: str
    #: The failure's stable name (`invalid_credentials`, `skill_timeout`, …); `unknown` for steps recorded before
    #: Vigil kept it.
    code: str
    count: int


@dataclass(frozen=True)
class OperationsSnapshot:
    """What an operator alerts on, read from the database in one scrape."""

    now: int
    queue: list[QueueGroup]
    open_by_status: dict[str, int]
    finished_by_status: dict[str, int]
    durations: DurationWindow
    checkpoints_waiting: int
    oldest_checkpoint_created_at: int | None
    skill_errors: list[SkillErrors]


class _OperationsCollector(Collector):
    """Yields one snapshot's families; a fresh registry per scrape, so series that emptied disappear."""

    def __init__(self, snapshot: OperationsSnapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterable[Metric]:
        s = self.snapshot
        queue = GaugeMetricFamily(
            "vigil_investigation_queue_depth",
            "Alerts waiting for their investigation to start (status created with an alert type, or submitted).",
            labels=["organization", "status"],
        )
        for group in s.queue:
            queue.add_metric([group.organization, group.status], group.count)
        yield queue
        oldest = min((group.oldest_created_at for group in s.queue), default=None)
        yield GaugeMetricFamily(
            "vigil_investigation_oldest_pending_age_seconds",
            "Age of the oldest alert still waiting for its investigation to start (0 when none waits).",
            value=0 if oldest is None else max(0, s.now - oldest),
        )
        yield _by_status(
            "vigil_investigations_open", "Alerts whose investigation has not finished, by status.", s.open_by_status
        )
        yield _by_status(
            "vigil_investigations_finished",
            "Alerts received in the last 24 h whose investigation finished, by status (completed or failed).",
            s.finished_by_status,
        )
        yield HistogramMetricFamily(
            "vigil_investigation_duration_seconds",
            "Created to completed, for completed investigations of alerts received in the last 24 h "
            "(a sliding window, not cumulative: use histogram_quantile on the buckets without rate()).",
            buckets=[
                *(
                    (str(float(bound)), count)
                    for bound, count in zip(DURATION_BUCKETS, s.durations.cumulative, strict=True)
                ),
                ("+Inf", s.durations.count),
            ],
            sum_value=s.durations.total_seconds,
        )
        yield GaugeMetricFamily(
            "vigil_checkpoints_waiting", "Chat checkpoints waiting for a person's answer.", value=s.checkpoints_waiting
        )
        waited = s.oldest_checkpoint_created_at
        yield GaugeMetricFamily(
            "vigil_checkpoint_oldest_wait_seconds",
            "How long the oldest waiting chat checkpoint has waited (0 when none waits).",
            value=0 if waited is None else max(0, s.now - waited),
        )
        errors = GaugeMetricFamily(
            "vigil_skill_call_errors",
            "Skill calls that failed in investigations of alerts received in the last 24 h, by integration, skill "
            "and error code.",
            labels=["integration", "skill", "code"],
        )
        for row in s.skill_errors:
            errors.add_metric([row.integration, row.skill, row.code], row.count)
        yield errors


def _by_status(name: str, documentation: str, counts: dict[str, int]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["status"])
    for status, count in counts.items():
        family.add_metric([status], count)
    return family


def operations_exposition(snapshot: OperationsSnapshot) -> bytes:
    registry = CollectorRegistry()
    registry.register(_OperationsCollector(snapshot))
    return generate_latest(registry)


def database_up_exposition(up: bool) -> bytes:
    """Whether this scrape could read the database: without it, the database-derived series are absent."""
    registry = CollectorRegistry()
    Gauge(
        "vigil_metrics_database_up",
        "1 when this scrape read the database-derived series, 0 when the database did not answer.",
        registry=registry,
    ).set(1 if up else 0)
    return generate_latest(registry)
