"""Attachments on screen: small images of stored files, and the composer's removable chips.

Thumbnails are read from the journal's attachment store on the core (never from disk on
the GUI thread), decoded and scaled there, and cached here by content hash; whoever shows one
hears ``ready`` when it arrives.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QImage, QPixmap, QTextDocument
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.app import LIMITS, Attachment, shown_size
from host.content import ImagePart
from ui.message_list.display_message import ATTACHMENT_URL, FILE_ICON_URL, THUMB, thumbnail_size
from ui.widgets.icons import icon
from ui.widgets.theme import RADIUS, SPACE, Tokens, tokens_of

__all__ = ["THUMB", "AttachmentChips", "Thumbnails", "scaled_thumbnail"]

CHIP_THUMB = 36  # an image chip's picture in the composer
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


class _Chip(QFrame):
    """One pending attachment: a picture or a file icon, its name and size, and a remove button."""

    def __init__(self, part: Attachment, thumbnails: Thumbnails, remove: Callable[[], None]) -> None:
        super().__init__()
        self.part = part
        self.setObjectName("AttachmentChip")
        self.thumbnails = thumbnails
        row = QHBoxLayout(self)
        row.setContentsMargins(SPACE["xs"], SPACE["xs"], SPACE["xs"], SPACE["xs"])
        row.setSpacing(SPACE["s"])
        self.picture = QLabel()
        self.picture.setFixedSize(CHIP_THUMB, CHIP_THUMB)
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        row.addWidget(self.picture)
        words = QVBoxLayout()
        words.setSpacing(0)
        self.name = QLabel(part.name or "image")
        self.name.setMaximumWidth(180)
        self.name.setText(self.name.fontMetrics().elidedText(part.name or "image", Qt.TextElideMode.ElideMiddle, 180))
        kind = "Image" if isinstance(part, ImagePart) else "Text"
        self.detail = QLabel(f"{kind} · {shown_size(part.size or 0)}")
        self.detail.setProperty("muted", True)
        words.addWidget(self.name)
        words.addWidget(self.detail)
        row.addLayout(words)
        self.remove = QToolButton()
        self.remove.setAutoRaise(True)
        self.remove.setAccessibleName(f"Remove {part.name or 'the image'}")
        self.remove.setToolTip(f"Remove {part.name or 'the image'}")
        self.remove.clicked.connect(remove)
        row.addWidget(self.remove, 0, Qt.AlignmentFlag.AlignTop)
        self.setToolTip(f"{part.name} ({shown_size(part.size or 0)})")
        self.setAccessibleName(f"Attachment {part.name}")
        self.restyle()

    def restyle(self) -> None:
        t = tokens_of(self)
        self.setStyleSheet(
            f"QFrame#AttachmentChip {{ background: {t.surface_alt}; border: 1px solid {t.border}; "
            f"border-radius: {RADIUS['s']}px; }} QLabel {{ border: none; background: transparent; }}"
        )
        self.detail.setStyleSheet(f"color: {t.muted};")
        self.remove.setIcon(icon("remove", t.muted))
        self.remove.setIconSize(QSize(12, 12))
        self.show_picture(t)

    def show_picture(self, t: Tokens | None = None) -> None:
        t = t or tokens_of(self)
        sha256 = self.part.sha256
        image = None
        if isinstance(self.part, ImagePart) and sha256:
            image = self.thumbnails.image(sha256, self.part.name or "")
        if image is not None:
            pixmap = QPixmap.fromImage(image).scaled(
                CHIP_THUMB, CHIP_THUMB, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
            self.picture.setPixmap(pixmap)
        else:
            name = "image" if isinstance(self.part, ImagePart) else "file"
            self.picture.setPixmap(icon(name, t.muted).pixmap(22, 22))


class AttachmentChips(QWidget):
    """The attachments waiting to go with the next message, as chips above the editor."""

    changed = Signal()

    def __init__(self, thumbnails: Thumbnails, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.thumbnails = thumbnails
        self.parts: list[Attachment] = []
        self.chips: list[_Chip] = []
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(SPACE["xs"], 0, 0, 0)
        self.row.setSpacing(SPACE["s"])
        self.row.addStretch(1)
        self.setToolTip(LIMITS)
        thumbnails.ready.connect(self._arrived)
        self.hide()

    def add(self, part: Attachment) -> None:
        if any(p.sha256 == part.sha256 and p.name == part.name for p in self.parts):
            return  # the same file twice is one attachment
        self.parts.append(part)
        chip = _Chip(part, self.thumbnails, lambda: self.remove(part))
        self.chips.append(chip)
        self.row.insertWidget(self.row.count() - 1, chip)
        self.show()
        self.changed.emit()

    def remove(self, part: Attachment) -> None:
        index = next((i for i, p in enumerate(self.parts) if p is part), None)
        if index is None:
            return
        self.parts.pop(index)
        chip = self.chips.pop(index)
        chip.hide()
        chip.deleteLater()
        self.setVisible(bool(self.parts))
        self.changed.emit()

    def clear(self) -> None:
        for part in list(self.parts):
            self.remove(part)

    def restyle(self) -> None:
        for chip in self.chips:
            chip.restyle()

    def _arrived(self, sha256: str) -> None:
        for chip in self.chips:
            if chip.part.sha256 == sha256:
                chip.show_picture()
