"""Files on their way into a message: read on the core as the composer asks, dropped anywhere
on the window, and the thumbnails the composer and the chat show."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage

from desktop.app import Attachment, too_many
from ui.chat_panel.attachment_chips import scaled_thumbnail
from ui.chat_panel.composer import dropped_files

if TYPE_CHECKING:
    from ui.window.main_window import MainWindow

__all__ = ["AttachmentIntake"]


class AttachmentIntake(QObject):
    """Reads what the composer is given to attach and hands back message parts."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.w = window
        self._wire()

    def _wire(self) -> None:
        composer = self.w.composer
        composer.attach_files.connect(self.attach_files)
        composer.attach_image.connect(self.attach_image)
        composer.thumbnails.fetch = self._fetch_thumbnail
        self.w.chat.message_delegate.use_thumbnails(composer.thumbnails)
        self.w.setAcceptDrops(True)  # files dropped anywhere on the window are attached
        self.w.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.w and isinstance(event, QDragEnterEvent | QDropEvent):
            mime = event.mimeData()
            if dropped_files(mime) or mime.hasImage():
                if isinstance(event, QDropEvent) and event.type() == QEvent.Type.Drop:
                    self.w.composer.take_drop(mime)
                event.acceptProposedAction()
                return True
        return False

    def attach_files(self, paths: list[str]) -> None:
        """Read each file once, on the core, into the journal's folder; it shows as a chip."""
        app = self.w.app
        for path in paths:
            self._attach(partial(app.attachments.attach_file, Path(path)))

    def attach_image(self, data: bytes, name: str) -> None:
        self._attach(lambda: self.w.app.attachments.attach_data(data, name))

    def _attach(self, work: Callable[[], Attachment]) -> None:
        composer = self.w.composer

        def done(part: Attachment) -> None:
            crowded = too_many(len(composer.attachments()) + 1)
            if crowded is not None:
                self.w.show_notice(crowded)
                return
            composer.add_attachment(part)

        self.w.run_on_core(work, done)

    def _fetch_thumbnail(self, sha256: str, name: str, done: Callable[[QImage | None], None]) -> None:
        """A stored image, read and scaled on the core; ``None`` when its file cannot be read."""
        app = self.w.app
        self.w.run_on_core(
            lambda: scaled_thumbnail(app.attachments.stored_bytes(sha256, name)), done, lambda _e: done(None)
        )
