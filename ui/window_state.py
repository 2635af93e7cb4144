"""What the window remembers between runs: its geometry and the last chat. Not settings."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from pydantic import BaseModel, ValidationError

from host.files import atomic_write_text

__all__ = ["WindowState"]

log = logging.getLogger(__name__)


class WindowState(BaseModel):
    geometry: str = ""  # base64 of QWidget.saveGeometry()
    last_session: str | None = None
    inspector_visible: bool = False

    @classmethod
    def load(cls, path: Path) -> WindowState:
        try:
            return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError, ValidationError):
            log.warning("ignoring an unreadable window state file %s", path)
            return cls()

    def save(self, path: Path) -> None:
        try:
            atomic_write_text(path, self.model_dump_json(indent=2))
        except OSError:
            log.warning("could not save the window state to %s", path)
