"""The window's banners: notices that sit above or below the chat and say what state it is in."""

from __future__ import annotations

import logging

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

from desktop.app import problem_text

__all__ = ["EditBanner", "Notice", "notice_label"]

log = logging.getLogger(__name__)


def notice_label(name: str, style: str) -> QLabel:
    """A wrapped, hidden label with an accessible name, for a notice shown when needed."""
    label = QLabel()
    label.setWordWrap(True)
    label.setAccessibleName(name)
    label.setStyleSheet(style)
    label.hide()
    return label


class Notice(QLabel):
    """The line under the chat that says what went wrong or what to know, until it is hidden."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setAccessibleName("Notice")
        self.setStyleSheet("color: #c62828; padding: 4px 10px;")
        self.hide()

    def show_text(self, text: str) -> None:
        self.setText(text)
        self.show()

    def show_error(self, error: BaseException) -> None:
        """Where the window shows what went wrong: a ``CairnError``'s own message; anything
        else said to be unexpected, its traceback in the log (``problem_text``)."""
        log.warning("%s: %s", type(error).__name__, error)
        self.show_text(problem_text(error))


SWITCH = "\u2039 \u203a"  # the arrows of a message's version switcher
LAST = f"Editing your last message: sending makes a new version of it; {SWITCH} on it shows the earlier one."
EARLIER = (
    "Editing an earlier message: sending starts a new version from there. The messages after it stay in the "
    f"earlier version; {SWITCH} on the message switches between them."
)


class EditBanner(QFrame):
    """'Editing your message', with Cancel; shown while an edit is under way in this chat."""

    def __init__(self) -> None:
        super().__init__()
        self.setAccessibleName("Editing a message")
        row = QHBoxLayout(self)
        row.setContentsMargins(10, 2, 10, 2)
        self.label = QLabel(LAST)
        self.label.setWordWrap(True)
        row.addWidget(self.label, 1)
        self.cancel = QPushButton("Cancel")
        self.cancel.setAccessibleName("Cancel editing")
        row.addWidget(self.cancel)
        self.hide()

    def editing(self, *, last: bool) -> None:
        """Say what sending will do, for the last message or an earlier one, and show."""
        self.label.setText(LAST if last else EARLIER)
        self.show()
