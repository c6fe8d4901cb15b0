"""Structured (JSON-lines) logging that carries the service name and the request id."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from steadfast.shared.request_context import current_request_id

_RESERVED = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per log record, with the service name and the request id."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "service": self.service,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = current_request_id.get()
        if request_id:
            entry["request_id"] = request_id
        for key, value in record.__dict__.items():
            if key not in _RESERVED and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class PlainFormatter(logging.Formatter):
    """One line of text per log record, with the service name and the request id."""

    def __init__(self, service: str) -> None:
        super().__init__("%(asctime)s %(levelname)s " + service + " %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        request_id = current_request_id.get()
        return f"{text} [request_id={request_id}]" if request_id else text


def configure_logging(service: str, level: str = "INFO", json_lines: bool = True) -> None:
    """Route every logger to stderr in one format; idempotent."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(service) if json_lines else PlainFormatter(service))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("uvicorn.access", "aiosqlite", "alembic.runtime.migration"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
