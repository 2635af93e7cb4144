"""Files on their way into a message: read on the core as the composer asks, dropped anywhere
on the window, and the thumbnails the composer and the chat show."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage
from PySide6.QtWidgets import QWidget

from desktop.app import Attachment, CairnApp, too_many
from ui.bridge.core_client import CoreClient
from ui.chat_panel.composer import Composer, dropped_files
from ui.message_list.message_delegate import MessageDelegate
from ui.message_list.thumbnails import scaled_thumbnail
from ui.widgets.banners import Notice

__all__ = ["AttachmentIntake"]


class AttachmentIntake(QObject):
    """Reads what the composer is given to attach and hands back message parts; files dropped
    anywhere on ``window`` go to the composer."""

    def __init__(
        self, core: CoreClient, window: QWidget, composer: Composer, delegate: MessageDelegate, notice: Notice
    ) -> None:
        super().__init__(window)
        self.core, self.window, self.composer, self.notice = core, window, composer, notice
        composer.attach_files.connect(self.attach_files)
        composer.attach_image.connect(self.attach_image)
        composer.thumbnails.fetch = self._fetch_thumbnail
        delegate.use_thumbnails(composer.thumbnails)
        window.setAcceptDrops(True)  # files dropped anywhere on the window are attached
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and isinstance(event, QDragEnterEvent | QDropEvent):
            mime = event.mimeData()
            if dropped_files(mime) or mime.hasImage():
                if isinstance(event, QDropEvent) and event.type() == QEvent.Type.Drop:
                    self.composer.take_drop(mime)
                event.acceptProposedAction()
                return True
        return False

    def attach_files(self, paths: list[str]) -> None:
        """Read each file once, on the core, into the journal's folder; it shows as a chip."""
        for path in paths:
            self._attach(_reading(Path(path)))

    def attach_image(self, data: bytes, name: str) -> None:
        self._attach(lambda app: app.attachments.attach_data(data, name))

    def _attach(self, work: Callable[[CairnApp], Attachment]) -> None:
        composer = self.composer

        def done(part: Attachment) -> None:
            crowded = too_many(len(composer.attachments()) + 1)
            if crowded is not None:
                self.notice.show_text(crowded)
                return
            composer.add_attachment(part)

        self.core.run_on_core(work, done)

    def _fetch_thumbnail(self, sha256: str, name: str, done: Callable[[QImage | None], None]) -> None:
        """A stored image, read and scaled on the core; ``None`` when its file cannot be read."""
        self.core.run_on_core(
            lambda app: scaled_thumbnail(app.attachments.stored_bytes(sha256, name)), done, lambda _e: done(None)
        )


def _reading(path: Path) -> Callable[[CairnApp], Attachment]:
    return lambda app: app.attachments.attach_file(path)
