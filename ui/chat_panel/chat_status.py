"""The status bar's words for the chat on screen: its usage, how full its context is, and a
"Retrying in …" while a request waits to go out again."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QStatusBar

from desktop.app import ContextFill, RequestUsage, UsageTotals
from desktop.turn.events import Retrying
from ui.chat_panel.shown_chat import ShownChat
from ui.chat_panel.status_line import StatusLine

__all__ = ["ChatStatus"]

Usage = tuple[UsageTotals, RequestUsage | None]


class ChatStatus:
    def __init__(self, line: StatusLine, bar: QStatusBar, shown: ShownChat) -> None:
        self.line, self.bar, self.shown = line, bar, shown
        self.fill: ContextFill | None = None  # the chat on screen's, as last shown
        self.retrying: str | None = None  # the chat whose "Retrying in …" the status bar shows

    def show_usage(self, usage: Usage) -> None:
        self.line.set_usage(*usage)

    def show_fill(self, fill: ContextFill | None) -> None:
        self.fill = fill
        self.line.set_fill(fill)
        full = fill is not None and fill.used >= fill.threshold
        self.line.labels[2].setStyleSheet("color: #b26a00;" if full else "")

    def fill_shower(self, session_id: str) -> Callable[[ContextFill | None], None]:
        """Shows a fill the core worked out for ``session_id``, if that chat is still on screen."""

        def shown(fill: ContextFill | None) -> None:
            if self.shown.showing(session_id):
                self.show_fill(fill)

        return shown

    def show_retrying(self, session_id: str, event: Retrying) -> None:
        self.retrying = session_id
        self.bar.showMessage(f"Retrying in {event.delay:.1f} s: {event.reason}")

    def end_retrying(self, session_id: str | None = None) -> None:
        """Take a "Retrying in …" off the status bar: its retry is over, or its chat is gone."""
        if self.retrying is not None and session_id in (None, self.retrying):
            self.retrying = None
            self.bar.clearMessage()

    def reset(self) -> None:
        """No chat on screen: its usage, context fill and retry note go."""
        self.end_retrying()
        self.line.set_usage(None, None)
        self.show_fill(None)
