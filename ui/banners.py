"""The window's banners: notices that sit above or below the chat and say what state it is in."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

__all__ = ["EditBanner", "notice_label"]


def notice_label(name: str, style: str) -> QLabel:
    """A wrapped, hidden label with an accessible name, for a notice shown when needed."""
    label = QLabel()
    label.setWordWrap(True)
    label.setAccessibleName(name)
    label.setStyleSheet(style)
    label.hide()
    return label


class EditBanner(QFrame):
    """'Editing your last message', with Cancel; shown while an edit is under way in this chat."""

    def __init__(self) -> None:
        super().__init__()
        self.setAccessibleName("Editing a message")
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 2, 10, 2)
        row.addWidget(QLabel("Editing your last message: sending replaces it and the answer after it."), 1)
        self.cancel = QPushButton("Cancel")
        self.cancel.setAccessibleName("Cancel editing")
        row.addWidget(self.cancel)
        self.hide()
