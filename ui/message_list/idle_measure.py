"""Measuring messages between frames.

A message's exact height needs its document laid out, a few hundred microseconds to several
milliseconds each. Measured all at once, a page of older messages would stall the window; left
until each row is painted, every measurement that differs from the row's estimate lays the
whole chat out again. ``IdleMeasurer`` measures a queue of messages a few milliseconds at a time
whenever the event loop is otherwise idle, and says when each batch is done.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, QTimer

from ui.message_list.display_message import DisplayMessage

__all__ = ["IdleMeasurer"]

SLICE_SECONDS = 0.004  # the longest the measuring holds the event loop at a time

Done = Callable[[bool, bool], None]  # (completed, any laid-out height changed)


@dataclass
class _Batch:
    messages: deque[DisplayMessage]
    done: Done
    changed: bool = field(default=False)


class IdleMeasurer(QObject):
    """Runs ``measure(message) -> changed`` over batches of messages, in slices between frames;
    each batch's ``done(completed, changed)`` is called when its last message is measured, or
    with ``completed=False`` when the batches are cancelled (a chat closed, say)."""

    def __init__(self, measure: Callable[[DisplayMessage], bool], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._measure = measure
        self._batches: deque[_Batch] = deque()
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._slice)

    def measure(self, messages: list[DisplayMessage], done: Done) -> None:
        """Measure ``messages`` in the order given."""
        self._batches.append(_Batch(deque(messages), done))
        self._timer.start()

    def busy(self) -> bool:
        return bool(self._batches)

    def cancel(self) -> None:
        batches, self._batches = self._batches, deque()
        self._timer.stop()
        for batch in batches:
            batch.done(False, batch.changed)

    def _slice(self) -> None:
        ends = time.perf_counter() + SLICE_SECONDS
        while self._batches and time.perf_counter() < ends:
            batch = self._batches[0]
            if batch.messages:
                batch.changed = self._measure(batch.messages.popleft()) or batch.changed
                continue
            self._batches.popleft()
            batch.done(True, batch.changed)
        if self._batches:
            self._timer.start()
