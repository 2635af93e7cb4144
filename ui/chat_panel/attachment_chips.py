"""The composer's attachments: a removable chip for each file on its way into a message, with
its picture from the shared ``Thumbnails``."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.app import LIMITS, Attachment, shown_size
from host.content import ImagePart
from ui.message_list.thumbnails import Thumbnails
from ui.widgets.icons import icon
from ui.widgets.theme import RADIUS, SPACE, Tokens, tokens_of

__all__ = ["AttachmentChips"]

CHIP_THUMB = 36  # an image chip's picture in the composer


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
