"""Cairn's log file: one rotating file in the log folder. Secrets never reach it."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

__all__ = ["configure_logging"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(log_dir: Path, *, level: int = logging.INFO) -> Path:
    """Send Cairn's log records to ``log_dir/cairn.log`` (rotated at 2 MB, 3 kept)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / "cairn.log"
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.setLevel(level)
    root.addHandler(handler)
    return path
