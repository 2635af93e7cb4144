"""The folded states of the chats in use: each is loaded once, then only advanced.

A chat's state is handed out advanced to its latest row, so whoever asks sees what the
journal holds now. A state holds the chat's rows (about 4 MB for every 1,000 messages of a few
sentences), so only the ``KEEP`` chats asked about last are kept, and any chat a turn is
running in (``holding``); another is let go and loaded again (one full fold) when it is next
asked about.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

from desktop.session.state import SessionState
from host.journal import Journal

__all__ = ["KEEP", "SessionStates"]

KEEP = 3


class SessionStates:
    def __init__(self, journal: Journal, keep: int = KEEP) -> None:
        self._journal, self._keep = journal, keep
        self._states: OrderedDict[str, SessionState] = OrderedDict()
        self._held: Counter[str] = Counter()

    def get(self, session_id: str) -> SessionState:
        """The chat's state, advanced to its latest row."""
        state = self._states.pop(session_id, None)
        if state is None:
            state = SessionState.load(self._journal, session_id)
        else:
            state.advance()
        self._states[session_id] = state
        for other in [s for s in self._states if s not in self._held][: max(len(self._states) - self._keep, 0)]:
            del self._states[other]  # the ones asked about longest ago
        return state

    @contextmanager
    def holding(self, session_id: str) -> Iterator[None]:
        """Keep the chat's state while a turn runs in it, however many other chats are opened."""
        self._held[session_id] += 1
        try:
            yield
        finally:
            self._held[session_id] -= 1
            if not self._held[session_id]:
                del self._held[session_id]

    def forget(self, session_id: str) -> None:
        self._states.pop(session_id, None)
