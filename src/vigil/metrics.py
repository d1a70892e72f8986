"""Prometheus metrics, defined once per process and exposed at /metrics."""

from collections.abc import Iterable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

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
