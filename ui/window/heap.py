"""Keeping Python's cyclic garbage collector out of the window's frames.

A full collection walks every object that survived two younger ones: with a long chat loaded
and a lifetime of chats listed, that took 20 to 50 ms, in the middle of whatever frame it fell
in. So, once the window is up, what start-up made (modules, classes, widgets: it lives as long
as Cairn) is collected once and frozen out of those walks, and the full collections run on a
timer of their own instead of when allocation counts say. Young collections still run as
usual, and objects are still freed when their last reference goes: only rubbish in reference
cycles waits for the timer.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

__all__ = ["FULL_COLLECTION_MS", "HeapKeeper"]

FULL_COLLECTION_MS = 60_000
NEVER = 1 << 30  # a generation-1 count no session reaches: no full collection of the collector's own


class HeapKeeper(QObject):
    """Runs the full collections of a running Cairn, every ``FULL_COLLECTION_MS``."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self, interval=FULL_COLLECTION_MS)
        self._timer.timeout.connect(self.collect)
        self._settled = False

    def settle(self) -> None:
        """Once the first window has painted: collect, freeze what is left, take over the full
        collections. Later calls (more windows) do nothing."""
        if self._settled:
            return
        self._settled = True
        gc.collect()
        gc.freeze()
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, NEVER)
        self._timer.start()

    def collect(self) -> None:
        gc.collect()
