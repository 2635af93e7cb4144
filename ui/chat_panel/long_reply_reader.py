"""A reply too long to lay out in the chat, whole, in a window of its own.

A plain-text editor lays out only the lines in view, so a 2 MB reply opens in a few tens of
milliseconds and scrolls freely. The reader finds text in it, copies it, and saves it (the
file is written by the core, as an export is).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import shown_size
from ui.widgets.export_name import export_folder

__all__ = ["LongReplyReader", "save_reply_as"]


def save_reply_as(parent: QWidget, text: str, save: Callable[[Path, str], None]) -> None:
    """Ask where to save ``text``, then hand it to ``save`` (the core writes it)."""
    suggested = str(export_folder() / "reply.txt")
    path, _ = QFileDialog.getSaveFileName(parent, "Save the reply as", suggested, "Text (*.txt *.md);;All files (*)")
    if path:
        save(Path(path), text)


class LongReplyReader(QDialog):
    """One long reply, read-only, with Find, Copy and Save as…"""

    def __init__(self, text: str, title: str, save: Callable[[Path, str], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("LongReplyReader")
        self.setWindowTitle(title)
        self.resize(900, 700)
        self.text = text
        self._save = save
        lines = text.count("\n") + 1
        self.about = QLabel(f"{shown_size(len(text.encode('utf-8', 'surrogatepass')))} · {lines:,} lines", self)
        self.editor = QPlainTextEdit(self)
        self.editor.setReadOnly(True)
        self.editor.setAccessibleName("The whole reply")
        self.editor.setPlainText(text)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Find in the reply")
        self.search.setAccessibleName("Find in the reply")
        self.search.returnPressed.connect(self.find_next)
        self.found = QLabel("", self)
        copy = QPushButton("Copy", self)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.text))
        save_button = QPushButton("Save as…", self)
        save_button.clicked.connect(lambda: save_reply_as(self, self.text, self._save))
        close = QPushButton("Close", self)
        close.clicked.connect(self.accept)
        bar = QHBoxLayout()
        bar.addWidget(self.search, 1)
        bar.addWidget(self.found)
        bar.addWidget(copy)
        bar.addWidget(save_button)
        bar.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.about)
        layout.addWidget(self.editor, 1)
        layout.addLayout(bar)
        find = QShortcut(QKeySequence(QKeySequence.StandardKey.Find), self)
        find.activated.connect(self.search.setFocus)

    def find_next(self) -> None:
        """The next place the words are found, from the start again past the end."""
        words = self.search.text()
        if not words:
            return
        if not self.editor.find(words):
            cursor = self.editor.textCursor()
            cursor.movePosition(cursor.MoveOperation.Start)
            self.editor.setTextCursor(cursor)
            if not self.editor.find(words, QTextDocument.FindFlag(0)):
                self.found.setText("Not found")
                return
        self.found.setText("")
