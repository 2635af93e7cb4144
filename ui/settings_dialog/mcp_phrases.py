"""How an MCP server's status reads and looks in Settings: a few words and a coloured dot."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from desktop.app import ServerState, ServerStatus, ServerView

__all__ = ["state_phrase", "status_dot", "status_phrase"]

_COLOURS = {
    "ready": "#2e7d32",
    "starting": "#f9a825",
    "failed": "#c62828",
    "stopped": "#9e9e9e",
    "sign in": "#f9a825",
}


def status_phrase(view: ServerView) -> str:
    """How a server is, in a few words: starting, ready with N tools, failed and why, stopped
    or disabled."""
    if view.problem:
        return f"cannot run: {view.problem}"
    if not view.enabled:
        return "disabled"
    status = view.status
    if status is None or status.state is ServerState.STOPPED:
        lazy = view.setting is not None and not view.setting.start_at_launch
        return "stopped; starts when a chat needs its tools" if lazy else "stopped"
    return state_phrase(status)


def state_phrase(status: ServerStatus) -> str:
    if status.state is ServerState.READY:
        tools = "1 tool" if status.tool_count == 1 else f"{status.tool_count} tools"
        left_out = f" ({len(status.skipped)} left out)" if status.skipped else ""
        return f"ready with {tools}{left_out}"
    if status.state is ServerState.FAILED:
        return f"failed: {status.reason}"
    if status.state is ServerState.SIGN_IN:
        return "waiting for you to sign in (Sign in… below)"
    return "starting…" if status.state is ServerState.STARTING else "stopped"


def _state(view: ServerView) -> str:
    if view.problem or (view.status is not None and view.status.state is ServerState.FAILED):
        return "failed"
    if not view.enabled or view.status is None:
        return "stopped"
    return view.status.state.value


def _dot(colour: str) -> QIcon:
    pixmap = QPixmap(14, 14)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(colour))
    painter.drawEllipse(2, 2, 10, 10)
    painter.end()
    return QIcon(pixmap)


def status_dot(view: ServerView) -> QIcon:
    """Green when ready, amber while starting, red when failed, grey when stopped or disabled."""
    return _dot(_COLOURS[_state(view)])
