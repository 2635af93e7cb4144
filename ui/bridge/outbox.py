"""Events on their way from the core to the GUI thread, with a streaming reply's pieces joined.

A provider may stream a reply a character at a time: two million events for a 2 MB reply. One
queued signal each would flood the GUI thread's event queue, and every handler would run two
million times. The outbox keeps the events in order and, while the GUI has not taken them yet,
adds a text (or reasoning) delta to the one before it when both are of one chat. The GUI takes
everything waiting at once, so a busy GUI thread gets fewer, larger deltas, and an idle one
gets each as it comes.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

from desktop.app import SessionEvent
from desktop.turn.events import ReasoningDelta, TextDelta

__all__ = ["Outbox"]

Delta = TextDelta | ReasoningDelta


@dataclass
class _Run:
    """Deltas of one kind for one chat, back to back: joined when taken."""

    session_id: str
    kind: type[Delta]
    pieces: list[str] = field(default_factory=list)

    def event(self) -> SessionEvent:
        return SessionEvent(self.session_id, self.kind("".join(self.pieces)))


class Outbox:
    """``put`` on any thread; whether the outbox was empty says whether the GUI must be told."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[object] = deque()

    def put(self, item: object) -> bool:
        """Queue ``item``; ``True`` when nothing was waiting before it (the GUI needs a wake-up)."""
        with self._lock:
            was_empty = not self._waiting
            delta = item.event if isinstance(item, SessionEvent) else None
            if isinstance(delta, TextDelta | ReasoningDelta):
                assert isinstance(item, SessionEvent)
                last = self._waiting[-1] if self._waiting else None
                if isinstance(last, _Run) and last.session_id == item.session_id and last.kind is type(delta):
                    last.pieces.append(delta.text)
                else:
                    self._waiting.append(_Run(item.session_id, type(delta), [delta.text]))
            else:
                self._waiting.append(item)
            return was_empty

    def take(self) -> list[object]:
        """Everything waiting, in order, each run of deltas as one."""
        with self._lock:
            waiting, self._waiting = self._waiting, deque()
        return [item.event() if isinstance(item, _Run) else item for item in waiting]
