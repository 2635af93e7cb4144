"""The spinner beside a reply being written: a turning arc painted by the delegate, kept
turning by a timer that repaints only its own few pixels while one is in view."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

__all__ = ["SIZE", "Spinner"]

SIZE = 14
TURN_MS = 900  # one turn
FRAME_MS = 50


class Spinner(QObject):
    """Paint with ``paint``; the next frame comes while some spinner was painted in the last."""

    def __init__(self, viewport: QWidget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.viewport = viewport
        self._painted: QRect | None = None  # where one was painted since the last frame
        self._frames = QTimer(self, interval=FRAME_MS)
        self._frames.timeout.connect(self._frame)

    def paint(self, painter: QPainter, rect: QRectF, colour: str) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pen = QPen(QColor(colour), 2)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        start = int((time.monotonic() * 1000 % TURN_MS) / TURN_MS * -360 * 16)
        painter.drawArc(rect.adjusted(1, 1, -1, -1), start, 270 * 16)
        painter.restore()
        where = rect.toAlignedRect()
        self._painted = where if self._painted is None else self._painted.united(where)
        if not self._frames.isActive():
            self._frames.start()

    @property
    def turning(self) -> bool:
        return self._frames.isActive()

    def _frame(self) -> None:
        if self._painted is None:  # none was painted since: none is in view
            self._frames.stop()
            return
        where, self._painted = self._painted, None
        self.viewport.update(where)
