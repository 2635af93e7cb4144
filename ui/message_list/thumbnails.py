"""Small images of stored attachments, for the chat and the composer alike.

Thumbnails are read from the journal's attachment store on the core (never from disk on
the GUI thread), decoded and scaled there, and cached here by content hash; whoever shows one
hears ``ready`` when it arrives.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QImage, QTextDocument

from desktop.app import Attachment
from host.content import ImagePart
from ui.message_list.display_message import ATTACHMENT_URL, FILE_ICON_URL, THUMB, thumbnail_size
from ui.widgets.icons import icon
from ui.widgets.theme import Tokens

__all__ = ["THUMB", "Fetch", "Thumbnails", "scaled_thumbnail"]

CACHE_SIZE = 120

# Fetches a stored attachment's thumbnail (sha256, name) and calls back on the GUI thread with
# it, or with ``None`` when its file cannot be read.
Fetch = Callable[[str, str, Callable[[QImage | None], None]], None]


def scaled_thumbnail(data: bytes, side: int = THUMB) -> QImage | None:
    """``data`` decoded and scaled to fit ``side``; ``None`` if it is not an image Qt reads.
    Safe off the GUI thread (QImage, not QPixmap)."""
    image = QImage.fromData(data)
    if image.isNull():
        return None
    if max(image.width(), image.height()) > side:
        image = image.scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)
    return image


class Thumbnails(QObject):
    """Thumbnails of stored images by content hash: fetched once, lazily, and kept."""

    ready = Signal(str)  # the sha256 whose thumbnail (or its absence) is now known

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.fetch: Fetch | None = None
        self._images: OrderedDict[str, QImage | None] = OrderedDict()
        self._pending: set[str] = set()

    def known(self, sha256: str) -> bool:
        return sha256 in self._images

    def image(self, sha256: str, name: str = "") -> QImage | None:
        """The thumbnail if it has arrived; otherwise ``None``, and it is asked for."""
        if sha256 in self._images:
            self._images.move_to_end(sha256)
            return self._images[sha256]
        if sha256 not in self._pending and self.fetch is not None:
            self._pending.add(sha256)
            self.fetch(sha256, name, lambda image: self.put(sha256, image))
        return None

    def stamp(self, attachments: list[Attachment]) -> tuple[bool, ...]:
        """Which of these images have arrived: a message's document is rebuilt as they do."""
        return tuple(self.known(p.sha256) for p in _stored_images(attachments) if p.sha256)

    def add_resources(self, document: QTextDocument, attachments: list[Attachment], t: Tokens) -> None:
        """The thumbnails and icons a message's attachments refer to (``ui.message_list.display_message``); an image
        still on its way, or whose file is gone, is a plain tile of its size, so the row keeps
        its height."""
        if not attachments:
            return
        kind = QTextDocument.ResourceType.ImageResource
        document.addResource(kind, QUrl(FILE_ICON_URL), icon("file", t.muted).pixmap(28, 28).toImage())
        for part in _stored_images(attachments):
            sha256 = part.sha256 or ""
            image = self.image(sha256, part.name or "")
            if image is None:
                image = QImage(*thumbnail_size(part), QImage.Format.Format_RGB32)
                image.fill(QColor(t.border))
            document.addResource(kind, QUrl(ATTACHMENT_URL + sha256), image)

    def put(self, sha256: str, image: QImage | None) -> None:
        self._pending.discard(sha256)
        self._images[sha256] = image
        if len(self._images) > CACHE_SIZE:
            self._images.popitem(last=False)
        self.ready.emit(sha256)


def _stored_images(attachments: list[Attachment]) -> list[ImagePart]:
    return [a for a in attachments if isinstance(a, ImagePart) and a.sha256 is not None]
