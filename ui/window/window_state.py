"""What the window remembers between runs: its geometry and the last chat. Not settings.
And how a remembered geometry is fitted to the screen it opens on.

The core reads and writes the file (``Preferences.window_state``), never the GUI thread; this
module only turns its text into a ``WindowState`` and back."""

from __future__ import annotations

import json
import logging

from pydantic import BaseModel, ValidationError
from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

__all__ = ["WindowState", "fit_to_screen", "fitted_rect"]

log = logging.getLogger(__name__)


class WindowState(BaseModel):
    geometry: str = ""  # base64 of QWidget.saveGeometry()
    last_session: str | None = None
    inspector_visible: bool = False

    @classmethod
    def parse(cls, text: str | None) -> WindowState:
        """The state the file's ``text`` holds; the defaults when there is none or it is unreadable."""
        if text is None:
            return cls()
        try:
            return cls.model_validate(json.loads(text))
        except (ValueError, ValidationError):
            log.warning("ignoring an unreadable window state file")
            return cls()

    def text(self) -> str:
        return self.model_dump_json(indent=2)


def fit_to_screen(window: QWidget) -> None:
    """Keep ``window`` inside the available area of the screen it is on (or the primary
    screen, when it was saved on one that is gone): never larger, never off it."""
    frame = window.frameGeometry()
    screen = QGuiApplication.screenAt(frame.center()) or window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    area = screen.availableGeometry()
    fitted = fitted_rect(frame, area)
    if fitted == frame:
        return
    # The frame (title bar, borders) is outside the window's own geometry: keep its margins.
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    window.resize(max(fitted.width() - extra_w, window.minimumWidth()), max(fitted.height() - extra_h, 1))
    window.move(fitted.topLeft())


def fitted_rect(rect: QRect, area: QRect) -> QRect:
    """``rect`` shrunk to fit ``area`` if it is larger, then moved inside it."""
    width, height = min(rect.width(), area.width()), min(rect.height(), area.height())
    left = min(max(rect.left(), area.left()), area.left() + area.width() - width)
    top = min(max(rect.top(), area.top()), area.top() + area.height() - height)
    return QRect(left, top, width, height)
