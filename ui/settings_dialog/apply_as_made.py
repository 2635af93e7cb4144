"""Settings apply as they are made: a value is saved a moment after the person stops changing
it (typing runs on), and at once when Settings closes, so nothing typed is ever left unsaved
behind a button. What came of it is said on the tab's status line."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, SignalInstance

__all__ = ["QUIET_MS", "ApplyAsMade"]

QUIET_MS = 600  # after the last change, the value is saved


class ApplyAsMade(QObject):
    """Calls ``save`` once the values behind ``changes`` have been still for ``QUIET_MS``."""

    def __init__(self, save: Callable[[], None], changes: list[SignalInstance], parent: QObject) -> None:
        super().__init__(parent)
        self._save = save
        self._holding = 0  # changes made by Cairn itself (showing a value) are not the person's
        self._quiet = QTimer(self, singleShot=True, interval=QUIET_MS)
        self._quiet.timeout.connect(self._save)
        for changed in changes:
            changed.connect(self._changed)

    def _changed(self, *_args: object) -> None:
        if not self._holding:
            self._quiet.start()

    def showing(self) -> _Showing:
        """Use as ``with applier.showing():`` around filling the fields in: that is no change."""
        return _Showing(self)

    @property
    def pending(self) -> bool:
        return self._quiet.isActive()

    def flush(self) -> None:
        """Save now what is still waiting (Settings is closing)."""
        if self._quiet.isActive():
            self._quiet.stop()
            self._save()


class _Showing:
    def __init__(self, applier: ApplyAsMade) -> None:
        self.applier = applier

    def __enter__(self) -> None:
        self.applier._holding += 1

    def __exit__(self, *_exc: object) -> None:
        self.applier._holding -= 1
