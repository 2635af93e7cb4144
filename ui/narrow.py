"""A narrow window: below ``NARROW_WIDTH`` the sidebar folds away behind the route bar's
"Chats" button, which opens it again beside the chat; choosing a chat folds it back.
Wider again, the sidebar is back for good."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QAbstractButton, QWidget

__all__ = ["NARROW_WIDTH", "NarrowLayout"]

NARROW_WIDTH = 700


class NarrowLayout(QObject):
    def __init__(self, window: QWidget, sidebar: QWidget, button: QAbstractButton) -> None:
        super().__init__(window)
        self.window, self.sidebar, self.button = window, sidebar, button
        self.narrow = False
        button.toggled.connect(self._toggled)
        window.installEventFilter(self)

    def fit(self) -> None:
        narrow = self.window.width() < NARROW_WIDTH
        if narrow == self.narrow:
            return
        self.narrow = narrow
        self.button.setChecked(False)
        self.button.setVisible(narrow)
        self.sidebar.setVisible(not narrow)

    def reveal(self) -> None:
        """Show the sidebar (to search, say), folded or not."""
        if self.narrow:
            self.button.setChecked(True)

    def fold(self) -> None:
        """A chat was chosen: in a narrow window the chat gets the room again."""
        if self.narrow:
            self.button.setChecked(False)

    def _toggled(self, shown: bool) -> None:
        if self.narrow:
            self.sidebar.setVisible(shown)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.Resize:
            self.fit()
        return False
