"""The composer: where a message is written. Enter sends, Shift+Enter starts a new line, Esc stops."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from desktop.message_text import MAX_MESSAGE_CHARS, message_problem

__all__ = ["MAX_MESSAGE_CHARS", "Composer", "message_problem"]


class _Editor(QPlainTextEdit):
    submit = Signal()
    stop = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submit.emit()
            return
        if event.key() == Qt.Key.Key_Escape:
            self.stop.emit()
            return
        super().keyPressEvent(event)


class Composer(QWidget):
    """Emits ``send(text)`` and ``stop()``; shows Send or Stop as the session is idle or busy."""

    send = Signal(str)
    stop = Signal()
    approve = Signal()  # Enter with nothing written: allow a waiting tool call once

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = _Editor()
        self.editor.setAccessibleName("Message")
        self.editor.setPlaceholderText("Write a message. Enter sends, Shift+Enter adds a line.")
        self.editor.setTabChangesFocus(True)
        self.editor.setFixedHeight(96)
        self.button = QPushButton("Send")
        self.button.setAccessibleName("Send")
        self.button.setDefault(False)
        self.button.clicked.connect(self._clicked)
        self.editor.submit.connect(self._submit)
        self.editor.stop.connect(self.stop)
        column = QVBoxLayout()
        column.addStretch(1)
        column.addWidget(self.button)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 8, 8)
        row.addWidget(self.editor, 1)
        row.addLayout(column)
        self.busy = False

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.button.setText("Stop" if busy else "Send")
        self.button.setAccessibleName("Stop" if busy else "Send")

    def text(self) -> str:
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        cursor = self.editor.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.editor.setTextCursor(cursor)

    def clear(self) -> None:
        self.editor.clear()

    def _clicked(self) -> None:
        if self.busy:
            self.stop.emit()
        else:
            self._submit()

    def _submit(self) -> None:
        if self.busy:
            return
        text = self.text()
        if text.strip():
            self.send.emit(text)
        else:
            self.approve.emit()
