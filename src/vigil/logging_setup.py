"""One logging configuration: text for people, JSON lines for log pipelines; request id on every line."""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime

from vigil.settings import LogFormat
from vigil.web.request_context import request_id_var

_STANDARD_ATTRS = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get()
        return True


_SECRET_QUERY = re.compile(r"(?i)\b(token|api_key|key|secret)=[^&\s\"']+")


class _RedactQuerySecrets(logging.Filter):
    """The access log prints paths with their query; E4/E5 carry the connection's webhook token there."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                _SECRET_QUERY.sub(r"\1=<redacted>", arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


_REDACT_QUERY_SECRETS = _RedactQuerySecrets()  # one instance, so reconfiguring never stacks copies


class JsonFormatter(logging.Formatter):
    """One JSON object per line with structured extras (`logger.info(..., extra={"alert_id": ...})`)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD_ATTRS})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(log_format: LogFormat, level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_RequestIdFilter())
    if log_format is LogFormat.JSON:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    logging.getLogger("uvicorn.access").addFilter(_REDACT_QUERY_SECRETS)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level.upper())
