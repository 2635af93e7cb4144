"""Where Cairn keeps its files.

By default the platform's user folders (platformdirs). ``CAIRN_HOME`` puts everything
under one folder instead: for portable installs, and for tests, which must never touch a
person's real folders.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["APP_NAME", "CairnPaths"]

APP_NAME = "Cairn"
HOME_ENV = "CAIRN_HOME"


@dataclass(frozen=True)
class CairnPaths:
    """The folders Cairn reads and writes. Nothing is created until it is needed."""

    data_dir: Path
    config_dir: Path
    cache_dir: Path
    log_dir: Path

    @property
    def journal(self) -> Path:
        return self.data_dir / "journal.sqlite3"

    @property
    def skills_dir(self) -> Path:
        """The user's own skills, one folder each (Agent Skills format)."""
        return self.data_dir / "skills"

    def problem(self) -> str | None:
        """Why these folders cannot be used (one of them lies under a file), or ``None``.

        Missing folders are fine: they are made when first needed.
        """
        for folder in (self.data_dir, self.config_dir, self.cache_dir, self.log_dir):
            existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
            if existing is not None and not existing.is_dir():
                hint = f"set {HOME_ENV} to a folder" if os.environ.get(HOME_ENV, "").strip() else "move it aside"
                return f"Cairn keeps its files in {folder}, but {existing} is a file, not a folder; {hint}."
        return None

    @classmethod
    def under(cls, home: Path) -> CairnPaths:
        home = home.expanduser().absolute()
        return cls(home / "data", home / "config", home / "cache", home / "logs")

    @classmethod
    def from_env(cls) -> CairnPaths:
        home = os.environ.get(HOME_ENV, "").strip()
        if home:
            return cls.under(Path(home))
        return cls(
            Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
        )
