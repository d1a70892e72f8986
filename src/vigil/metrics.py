"""Prometheus metrics, defined once per process and exposed at /metrics."""

from prometheus_client import Counter, Histogram

HTTP_REQUEST_SECONDS = Histogram(
    "vigil_http_request_duration_seconds",
    "HTTP request latency by method, route template and status.",
    ["method", "route", "status"],
)
ALERTS_INGESTED = Counter("vigil_alerts_ingested_total", "Alerts accepted by intake.", ["alert_provider"])
INTAKE_REJECTED = Counter(
    "vigil_intake_rejected_total", "Intake requests or batch items rejected, by error code.", ["code"]
)
