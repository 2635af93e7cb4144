"""The composer: where a message is written. Enter sends, Shift+Enter starts a new line, Esc stops."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from desktop.message_text import MAX_MESSAGE_CHARS, message_problem
from ui.icons import icon
from ui.theme import Tokens

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
        self.editor.setFixedHeight(84)
        self.button = QPushButton("Send")
        self.button.setAccessibleName("Send")
        self.button.setProperty("primary", True)
        self.button.setIconSize(QSize(16, 16))
        self.button.setDefault(False)
        self.button.clicked.connect(self._clicked)
        self.editor.submit.connect(self._submit)
        self.editor.stop.connect(self.stop)
        frame = QFrame()
        frame.setObjectName("Composer")  # the rounded box around the editor and its button (ui/theme.py)
        column = QVBoxLayout()
        column.addStretch(1)
        column.addWidget(self.button)
        inside = QHBoxLayout(frame)
        inside.setContentsMargins(8, 6, 8, 8)
        inside.addWidget(self.editor, 1)
        inside.addLayout(column)
        outside = QVBoxLayout(self)
        outside.setContentsMargins(16, 4, 16, 12)
        outside.addWidget(frame)
        self.busy = False
        self.set_busy(False)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.button.setText("Stop" if busy else "Send")
        self.button.setAccessibleName("Stop" if busy else "Send")
        self.button.setToolTip("Stop the reply (Esc)" if busy else "Send (Enter)")
        tokens = Tokens.of(dark=self.palette().base().color().lightness() < 128)
        self.button.setIcon(icon("stop" if busy else "send", tokens.accent_text))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: tint the button's icon again
            self.set_busy(self.busy)
        super().changeEvent(event)

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
