"""The folded states of the chats in use: each is loaded once, then only advanced.

A chat's state is handed out advanced to its latest row, so whoever asks sees what the
journal holds now; a chat not asked about for a while is let go (``KEEP`` are kept), and
loaded again (one full fold) when it is next asked about.
"""

from __future__ import annotations

from collections import OrderedDict

from desktop.session.state import SessionState
from host.journal import Journal

__all__ = ["KEEP", "SessionStates"]

KEEP = 8


class SessionStates:
    def __init__(self, journal: Journal, keep: int = KEEP) -> None:
        self._journal, self._keep = journal, keep
        self._states: OrderedDict[str, SessionState] = OrderedDict()

    def get(self, session_id: str) -> SessionState:
        """The chat's state, advanced to its latest row."""
        state = self._states.pop(session_id, None)
        if state is None:
            state = SessionState.load(self._journal, session_id)
        else:
            state.advance()
        self._states[session_id] = state
        while len(self._states) > self._keep:
            self._states.popitem(last=False)
        return state

    def forget(self, session_id: str) -> None:
        self._states.pop(session_id, None)
