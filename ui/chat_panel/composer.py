"""The composer: where a message is written. Enter sends, Shift+Enter starts a new line, Esc stops.

Files come with a message three ways: the paperclip button, dropping files on the composer (or
anywhere on the window), and pasting an image or copied files; an MCP server's resource comes
through the button beside it ("Attach from an MCP server…"). They wait as chips above the
editor until the message is sent (``desktop.app.attachments`` says what is taken).

``/`` typed first lists the MCP servers' prompts above the editor (``prompt_picker``, which
the editor lets see its keys first).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QBuffer, QByteArray, QEvent, QIODevice, QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QKeyEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app import LIMITS, MAX_MESSAGE_CHARS, Attachment, message_problem
from ui.chat_panel.attachment_chips import AttachmentChips
from ui.message_list.thumbnails import Thumbnails
from ui.widgets.icons import icon
from ui.widgets.theme import tokens_of

__all__ = ["MAX_MESSAGE_CHARS", "Composer", "dropped_files", "message_problem", "pasted_image"]

PASTED_NAME = "Pasted image.png"


def dropped_files(mime: QMimeData) -> list[str]:
    """The local files in a drop or a paste, as paths."""
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]


def pasted_image(mime: QMimeData) -> bytes | None:
    """An image on the clipboard (a screenshot, say) as PNG bytes."""
    if not mime.hasImage():
        return None
    image = mime.imageData()
    if not isinstance(image, QImage) or image.isNull():
        return None
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # PySide6 takes the format as str
    buffer.close()
    return bytes(data.data())


def _tool_button(name: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setAutoRaise(True)
    button.setAccessibleName(name)
    button.setToolTip(tip)
    button.setIconSize(QSize(18, 18))
    return button


class _Editor(QPlainTextEdit):
    submit = Signal()
    stop = Signal()
    files = Signal(list)  # paths dropped or pasted
    image = Signal(bytes, str)  # a pasted image's PNG bytes and its name
    typed = Signal()  # after a key the person pressed reached the text
    intercept: Callable[[QKeyEvent], bool] | None = None  # sees a key first, and may take it (the prompts' list)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return bool(dropped_files(source)) or source.hasImage() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Files and images become attachments; text is inserted as text."""
        if paths := dropped_files(source):
            self.files.emit(paths)
        elif (png := pasted_image(source)) is not None:
            self.image.emit(png, PASTED_NAME)
        else:
            super().insertFromMimeData(source)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.intercept is not None and self.intercept(event):
            return
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
        self.typed.emit()


class Composer(QWidget):
    """Emits ``send(text)`` and ``stop()``; shows Send or Stop as the session is idle or busy.
    Files to attach are asked for with ``attach_files(paths)`` and ``attach_image(png, name)``,
    a server's resource with ``choose_resource()``; whoever reads them adds the result with
    ``add_attachment``."""

    send = Signal(str)
    stop = Signal()
    approve = Signal()  # Enter with nothing written: allow a waiting tool call once
    attach_files = Signal(list)
    attach_image = Signal(bytes, str)
    choose_resource = Signal()

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
        self.editor.files.connect(self.attach_files)
        self.editor.image.connect(self.attach_image)
        self.attach = _tool_button(
            "Attach files", f"Attach images or text files; you can also drop or paste them. {LIMITS}"
        )
        self.attach.clicked.connect(self.choose_files)
        self.attach_resource = _tool_button(
            "Attach from an MCP server", f"Attach a resource an MCP server offers, as you would a file. {LIMITS}"
        )
        self.attach_resource.clicked.connect(self.choose_resource)
        self.thumbnails = Thumbnails(self)
        self.chips = AttachmentChips(self.thumbnails)
        frame = QFrame()
        frame.setObjectName("Composer")  # the rounded box around the editor and its button (ui/widgets/theme.py)
        column = QVBoxLayout()
        column.addStretch(1)
        column.addWidget(self.button)
        clip = QVBoxLayout()
        clip.addStretch(1)
        clip.addWidget(self.attach_resource)
        clip.addWidget(self.attach)
        inside = QHBoxLayout()
        inside.setContentsMargins(0, 0, 0, 0)
        inside.addLayout(clip)
        inside.addWidget(self.editor, 1)
        inside.addLayout(column)
        self._box = box = QVBoxLayout(frame)
        box.setContentsMargins(8, 6, 8, 8)
        box.setSpacing(4)
        box.addWidget(self.chips)
        box.addLayout(inside)
        self.setAcceptDrops(True)
        outside = QVBoxLayout(self)
        outside.setContentsMargins(16, 4, 16, 12)
        outside.addWidget(frame)
        self.busy = False
        self.set_busy(False)

    def add_above_editor(self, widget: QWidget) -> None:
        """Show ``widget`` between the attachments and the editor (the prompts' list)."""
        self._box.insertWidget(1, widget)

    def set_busy(self, busy: bool) -> None:
        self.busy = busy
        self.button.setText("Stop" if busy else "Send")
        self.button.setAccessibleName("Stop" if busy else "Send")
        self.button.setToolTip("Stop the reply (Esc)" if busy else "Send (Enter)")
        tokens = tokens_of(self)
        self.button.setIcon(icon("stop" if busy else "send", tokens.accent_text))
        self.attach.setIcon(icon("attach", tokens.muted))
        self.attach_resource.setIcon(icon("attach-resource", tokens.muted))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: tint the button's icon again
            self.set_busy(self.busy)
            self.chips.restyle()
        super().changeEvent(event)

    # -- attachments ---------------------------------------------------------------------

    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self, "Attach files", "", "Images and text files (*);;Images (*.png *.jpg *.jpeg *.gif *.webp)"
        )
        if paths:
            self.attach_files.emit(paths)

    def add_attachment(self, part: Attachment) -> None:
        self.chips.add(part)

    def attachments(self) -> tuple[Attachment, ...]:
        return tuple(self.chips.parts)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if dropped_files(event.mimeData()) or event.mimeData().hasImage():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        self.take_drop(event.mimeData())
        event.acceptProposedAction()

    def take_drop(self, mime: QMimeData) -> bool:
        """Files or an image dropped anywhere on the window: ask to attach them."""
        if paths := dropped_files(mime):
            self.attach_files.emit(paths)
        elif (png := pasted_image(mime)) is not None:
            self.attach_image.emit(png, "Dropped image.png")
        else:
            return False
        return True

    def text(self) -> str:
        return self.editor.toPlainText()

    def take_focus(self) -> None:
        """Back to writing, after a dialog or a card took the focus."""
        if self.isEnabled():
            self.editor.setFocus()

    def set_text(self, text: str) -> None:
        self.editor.setPlainText(text)
        cursor = self.editor.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.editor.setTextCursor(cursor)

    def clear(self) -> None:
        self.editor.clear()
        self.chips.clear()

    def _clicked(self) -> None:
        if self.busy:
            self.stop.emit()
        else:
            self._submit()

    def _submit(self) -> None:
        if self.busy:
            return
        text = self.text()
        if text.strip() or self.chips.parts:  # attachments alone make a message
            self.send.emit(text)
        else:
            self.approve.emit()
