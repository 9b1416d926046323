"""Structured logs: one JSON object a line on standard error.

Every record has ``time`` (RFC 3339, UTC), ``level`` and ``msg`` (a short
constant sentence, as the kubelet's structured logs have), then its
key/value pairs (``file``, ``pod``, ``uid``, ``result``, ``reason``,
``message``...). Give them as ``log.info("Pod admitted", extra={"kv": {...}})``.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import IO, Any

__all__ = ["LOGGER_NAME", "JSONFormatter", "setup_logging", "kv"]

LOGGER_NAME = "podnuma.agent"


def kv(**fields: Any) -> dict[str, Any]:
    """``extra=`` for a log call carrying ``fields``."""
    return {"kv": fields}


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "msg": record.getMessage(),
        }
        fields = getattr(record, "kv", None)
        if isinstance(fields, dict):
            out.update({k: v for k, v in fields.items() if v is not None})
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def setup_logging(stream: IO[str] | None = None, level: int = logging.INFO) -> logging.Logger:
    logger = logging.getLogger(LOGGER_NAME)
    logger.handlers.clear()
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JSONFormatter())
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    return logger
