"""Structured logs: JSON lines when stderr is not a terminal, short text when it is.

Quiet by default (warnings and up); ``SEGFLOW_LOG_LEVEL=info`` or ``debug`` for more.
Every line passes through :func:`segflow.redaction.redact`.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import time

from ..redaction import redact

LOG_LEVEL_ENV = "SEGFLOW_LOG_LEVEL"


class JsonFormatter(logging.Formatter):
    def __init__(self, component: str):
        super().__init__()
        self.component = component

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "component": self.component,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in getattr(record, "fields", {}).items():
            entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(entry, default=str))


class RedactingFormatter(logging.Formatter):
    """Text lines for a terminal, credentials masked like the JSON ones."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


def configure(component: str, level: str | None = None) -> None:
    level = (level or os.environ.get(LOG_LEVEL_ENV) or "warning").upper()
    handler = logging.StreamHandler(sys.stderr)
    if sys.stderr.isatty():
        handler.setFormatter(RedactingFormatter(f"%(asctime)s {component} %(levelname)s %(message)s", "%H:%M:%S"))
    else:
        handler.setFormatter(JsonFormatter(component))
    root = logging.getLogger("segflow")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
    logging.Formatter.converter = time.gmtime


def event(logger: logging.Logger, level: int, message: str, **fields) -> None:
    """Log ``message`` with structured ``fields`` (kept as JSON keys)."""
    logger.log(level, message, extra={"fields": fields})
