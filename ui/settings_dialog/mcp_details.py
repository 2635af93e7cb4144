"""The box under an MCP server's status: the end of its stderr when it failed; the tools it
left out and what it logged lately (``notifications/message``, redacted) while it runs."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QPlainTextEdit

from desktop.app import ServerState, ServerView
from host.text import printable
from ui.bridge.core_client import CoreClient

__all__ = ["StatusDetails"]

SHOWN_LOG_LINES = 20


class StatusDetails:
    def __init__(self, core: CoreClient, selected_name: Callable[[], str | None]) -> None:
        self.core, self.selected_name = core, selected_name
        self.box = QPlainTextEdit()
        self.box.setReadOnly(True)
        self.box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.box.setMaximumHeight(110)
        self.box.setAccessibleName("What the server wrote")

    def show(self, view: ServerView | None) -> None:
        status = view.status if view is not None else None
        if view is None or status is None:
            self.show_text("")
            return
        if status.state is ServerState.FAILED:
            self.show_text(status.stderr_tail)
            return
        left_out = [f"left out {s.name}: {s.reason}" for s in status.skipped]
        self.show_text("\n".join(left_out))
        if status.state is ServerState.READY:
            name = view.name
            self.core.run_on_core(
                lambda app: app.mcp.log_lines(name), lambda lines: self._logged(name, left_out, lines)
            )

    def show_text(self, text: str) -> None:
        self.box.setPlainText(printable(text.strip(), keep_newlines=True))
        self.box.setVisible(bool(text.strip()))

    def _logged(self, name: str, left_out: list[str], lines: list[str]) -> None:
        if lines and self.selected_name() == name:  # still the server on show
            self.show_text("\n".join([*left_out, "What it logged lately:", *lines[-SHOWN_LOG_LINES:]]))
