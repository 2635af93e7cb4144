"""The built-in engine in the status bar: the model it holds, its memory, what the last
request reused and read, and Unload. Hidden while the engine has never run."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from desktop.app import EngineStatus

__all__ = ["EngineIndicator"]


class EngineIndicator(QWidget):
    unload_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setAccessibleName("Built-in engine")
        self.unload = QToolButton()
        self.unload.setText("Unload")
        self.unload.setAccessibleName("Unload the built-in engine's model")
        self.unload.setToolTip(
            "Stop the built-in engine and free its memory; the chat is saved and the next message starts it again"
        )
        self.unload.clicked.connect(self.unload_requested.emit)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        row.addWidget(self.label)
        row.addWidget(self.unload)
        self.status: EngineStatus | None = None
        self.hide()

    def on_event(self, item: object) -> None:
        if isinstance(item, EngineStatus):
            self.show_status(item)

    def show_status(self, status: EngineStatus) -> None:
        self.status = status
        if status.state == "stopped" and not status.note:
            self.hide()
            return
        if status.state == "ready":
            words = "Engine" + (f" {status.memory / 2**20:,.0f} MiB" if status.memory else "")
            words += f" · {status.read.words()}" if status.read is not None else ""
        else:
            words = status.words() if status.state == "loading" else "Engine: stopped"
        self.label.setText(words)
        tip = [status.words()]
        if status.note and status.note not in tip:
            tip.append(status.note)
        if status.read is not None:
            tip.append(f"Last request: the engine {status.read.words()} (its own counters).")
        self.label.setToolTip("\n".join(tip))
        self.unload.setVisible(status.state == "ready")
        self.show()
