"""Which chat a window shows: every part of the chat panel reads it, and opening or beginning
a chat takes it."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from host.content import Mode

__all__ = ["ShownChat"]


class ShownChat(QObject):
    """The chat on screen (``None``: none yet, or it was deleted), and the mode chosen for a
    chat not begun yet. ``taken`` says when a chat comes on screen."""

    taken = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session_id: str | None = None
        self.pending_mode: Mode | None = None  # chosen before the chat's first message

    def take(self, session_id: str) -> None:
        self.session_id = session_id
        self.taken.emit(session_id)

    def showing(self, session_id: str | None) -> bool:
        return session_id is not None and session_id == self.session_id
