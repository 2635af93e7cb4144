"""A desktop notification when a long reply finishes while Cairn is in the background.

A reply that took ``LONG_REPLY_SECONDS`` or more, finished while no Cairn window is active,
is announced: with a message from the system tray where the desktop has one, and by asking
the window manager to draw attention to the window (a flashing taskbar entry) in any case.
A reply the person stopped is not announced, nor one that finished quickly or in front of
them. The clock and the question "is a Cairn window active?" are seams, for tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

__all__ = ["LONG_REPLY_SECONDS", "ReplyNotifier", "should_notify"]

LONG_REPLY_SECONDS = 10.0
MESSAGE_MS = 8_000


def should_notify(elapsed: float, cairn_active: bool) -> bool:
    """Whether a reply that took ``elapsed`` seconds is worth a notification now."""
    return elapsed >= LONG_REPLY_SECONDS and not cairn_active


def cairn_active() -> bool:
    """Whether one of Cairn's windows (or one of its dialogs) has the focus."""
    return QApplication.activeWindow() is not None


class ReplyNotifier(QObject):
    """Times each chat's reply and announces the long ones that end in the background."""

    notified = Signal(str, str)  # the chat's id, the message shown

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        active: Callable[[], bool] = cairn_active,
    ) -> None:
        super().__init__(parent)
        self.clock, self.active = clock, active
        self._started: dict[str, float] = {}

    def started(self, session_id: str) -> None:
        self._started[session_id] = self.clock()

    def finished(self, session_id: str, *, stopped: bool = False) -> bool:
        """The chat's reply is over: whether to announce it (it was long, the person did not
        stop it, and Cairn is in the background)."""
        began = self._started.pop(session_id, None)
        return began is not None and not stopped and should_notify(self.clock() - began, self.active())

    def announce(self, session_id: str, window: QWidget, title: str, *, ok: bool) -> None:
        chat = f"“{title}”" if title else "your chat"
        message = f"The answer in {chat} is ready." if ok else f"The reply in {chat} stopped with an error."
        _announce(window, message)
        self.notified.emit(session_id, message)


def _announce(window: QWidget, message: str) -> None:
    QApplication.alert(window)
    if QSystemTrayIcon.isSystemTrayAvailable() and QSystemTrayIcon.supportsMessages():
        _Tray.instance().show(window, message)


class _Tray:
    """Cairn's one tray icon: shown while a notification waits, gone once Cairn is in front;
    clicking it or its message brings back the window whose reply it announced."""

    _made: ClassVar[list[_Tray]] = []

    @classmethod
    def instance(cls) -> _Tray:
        if not cls._made:
            cls._made.append(cls())
        return cls._made[0]

    def __init__(self) -> None:
        app = QApplication.instance()
        self.icon = QSystemTrayIcon(QGuiApplication.windowIcon(), app)
        self.icon.setToolTip("Cairn")
        self.icon.messageClicked.connect(self._bring_back)
        self.icon.activated.connect(lambda _reason: self._bring_back())
        if isinstance(app, QGuiApplication):
            app.applicationStateChanged.connect(self._state_changed)
        self.window: QWidget | None = None

    def show(self, window: QWidget, message: str) -> None:
        self.window = window
        self.icon.show()
        self.icon.showMessage("Cairn", message, QSystemTrayIcon.MessageIcon.Information, MESSAGE_MS)

    def _state_changed(self, state: Qt.ApplicationState) -> None:
        if state == Qt.ApplicationState.ApplicationActive:
            self.icon.hide()

    def _bring_back(self) -> None:
        self.icon.hide()
        window, self.window = self.window, None
        if window is None:
            return
        try:
            if window.isMinimized():
                window.showNormal()
            window.raise_()
            window.activateWindow()
        except RuntimeError:  # the window was closed meanwhile
            pass
