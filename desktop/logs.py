"""Cairn's log file: one rotating file in the log folder. Secrets never reach it."""

from __future__ import annotations

import logging
import logging.handlers
from io import TextIOWrapper
from pathlib import Path

from host.files import private_dir, private_file

__all__ = ["configure_logging"]


class _PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Every log file it opens, first or after rotating, is owner-only."""

    def _open(self) -> TextIOWrapper:
        private_file(Path(self.baseFilename))
        return super()._open()


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(log_dir: Path, *, level: int = logging.INFO) -> Path | None:
    """Send Cairn's log records to ``log_dir/cairn.log`` (rotated at 2 MB, 3 kept).

    A log folder that cannot be made or written (a read-only or full disk, ``CAIRN_HOME``
    naming a file) leaves Cairn without a log file rather than stopping it; returns ``None``
    then. A record that fails to be written later is dropped silently, never printed as a
    traceback.
    """
    logging.raiseExceptions = False
    root = logging.getLogger()
    root.setLevel(level)
    path = log_dir / "cairn.log"
    try:
        private_dir(log_dir)
        handler = _PrivateRotatingFileHandler(path, maxBytes=2_000_000, backupCount=3, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root.addHandler(handler)
    # httpx notes every request at INFO: waiting for the engine alone would fill the log with
    # "GET /health 503". What went wrong is logged by Cairn itself, in its words.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return path
