"""The wheel over a value box scrolls the page it is on, unless the box has the focus: a box
that took every wheel turn under the pointer would change a setting while the person only
meant to scroll past it (Settings' forms are long)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QWidget

__all__ = ["scroll_past"]


class _ScrollPast(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget) or watched.hasFocus():
            return False
        page = watched.parentWidget()
        while page is not None and not isinstance(page, QAbstractScrollArea):
            page = page.parentWidget()
        if page is not None:
            QApplication.sendEvent(page.viewport(), event)  # the page scrolls, as over any other part of it
        return True  # and the box stays as it was


_FILTER = _ScrollPast()


def scroll_past(box: QWidget) -> None:
    """Let the wheel over ``box`` scroll its page until the box is clicked or tabbed into."""
    box.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel alone no longer gives it the focus
    box.installEventFilter(_FILTER)
