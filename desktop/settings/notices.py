"""Notices told once, remembered in ``notices.json`` in the config folder: what Cairn has
already said, not a setting (as the window's place in ``window.json``). A file that cannot be
read or written costs only telling a notice again."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from host.files import atomic_write_text

__all__ = ["NOTICES_FILE", "Notices"]

log = logging.getLogger(__name__)

NOTICES_FILE = "notices.json"


class Notices:
    def __init__(self, path: Path) -> None:
        self.path = path

    def told(self) -> list[str]:
        """The notices told so far."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.info("ignoring an unreadable %s: %s", self.path.name, exc)
            return []
        told = data.get("told") if isinstance(data, dict) else None
        return [name for name in told if isinstance(name, str)] if isinstance(told, list) else []

    def tell_once(self, name: str) -> bool:
        """Whether ``name`` is still to be told; remembered as told from now on."""
        told = self.told()
        if name in told:
            return False
        try:
            atomic_write_text(self.path, json.dumps({"told": [*told, name]}) + "\n")
        except OSError as exc:
            log.info("could not remember the notice %s: %s", name, exc)  # not worth a line on a terminal
        return True
