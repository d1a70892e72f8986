"""Per-request context (request id) available to log records without threading it everywhere."""

from contextvars import ContextVar

request_id_var: ContextVar[str] = ContextVar("request_id", default="-")
