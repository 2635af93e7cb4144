"""Paints the chat's messages: yours on the right in a tinted bubble, the assistant's full
width without a box, errors, approvals and summaries as cards, and under each message a row
of icon buttons and its time that shows while the pointer is over it.

A message's document is built only when it comes near the viewport. Rows far from it are
sized by a cheap estimate; a row's exact height is measured the first time it is painted, and
the view is told when that differs. Links inside a message ("Reasoning", a code block's Copy,
an approval's answers) and the buttons under it both end in ``action(key, name)``.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPointF, QRect, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QHelpEvent, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QAbstractItemView, QListView, QStyledItemDelegate, QStyleOptionViewItem, QToolTip

from ui.message_list.display_message import DisplayMessage, message_actions, shown_time
from ui.message_list.idle_measure import IdleMeasurer
from ui.message_list.message_documents import MessageDocuments, StackedDocument
from ui.message_list.message_layout import (
    ACTIONS,
    CARDS,
    GAP,
    ICON,
    PAD,
    Geometry,
    column_of,
    estimated_height,
    has_button_row,
    message_geometry,
    text_width,
)
from ui.message_list.message_model import MESSAGE_ROLE, MessageModel
from ui.message_list.spinner import SIZE as SPINNER
from ui.message_list.spinner import Spinner
from ui.message_list.thumbnails import Thumbnails
from ui.widgets.icons import icon
from ui.widgets.theme import RADIUS, Tokens

__all__ = ["MessageDelegate"]

Index = QModelIndex | QPersistentModelIndex


class MessageDelegate(QStyledItemDelegate):
    """Paints messages and turns clicks on their links and buttons into ``action(key, name)``;
    ``resized`` asks the view for a layout when rows were measured at other heights."""

    action = Signal(str, str)
    resized = Signal()

    def __init__(self, view: QListView, rows: MessageModel) -> None:
        super().__init__(view)
        self.view = view
        self.dark = False
        self.hovered: str | None = None  # the key of the message under the pointer
        self.documents = MessageDocuments(self.view.font, lambda: self.thumbnails, self)
        self.documents.grew = self._grew
        self._heights: dict[str, tuple[tuple[Any, ...], int]] = {}
        self._estimated: set[str] = set()  # rows laid out at an estimate, not yet measured
        self._guesses: dict[str, tuple[tuple[Any, ...], int]] = {}  # the estimates, as laid out
        self._sizes: dict[str, tuple[tuple[int, int], QSize]] = {}  # the sizes last given, by row key
        self._resize_due = False  # rows measured at another height than laid out: a layout is due
        self._measuring = False  # measuring ahead of a layout: the view needs no telling
        self.later = IdleMeasurer(self.measure, self)  # messages measured between frames
        self.rows = rows  # the view's one model, filled afresh for each chat
        self._width = 0  # the view's width as the layout under way reads it
        self.highlight: tuple[str, ...] = ()  # words marked in every message: a search's
        self.thumbnails = Thumbnails(self)  # replaced by the window's shared cache (use_thumbnails)
        self.spinner = Spinner(view.viewport(), self)

    def use_thumbnails(self, thumbnails: Thumbnails) -> None:
        """Show attached images from ``thumbnails``; a message repaints when its images arrive."""
        self.thumbnails = thumbnails
        thumbnails.ready.connect(lambda _sha: self.view.viewport().update())

    @property
    def tokens(self) -> Tokens:
        return Tokens.of(dark=self.dark)

    def clear(self) -> None:
        self.later.cancel()
        self.documents.clear()
        self._heights.clear()
        self._guesses.clear()
        self._sizes.clear()
        self._estimated.clear()

    def release(self, messages: list[DisplayMessage]) -> None:
        """``messages`` left the model: what was kept to draw them goes."""
        for message in messages:
            self.documents.forget(message.key)
            for kept in (self._heights, self._guesses, self._sizes):
                kept.pop(message.key, None)
            self._estimated.discard(message.key)

    # -- documents -----------------------------------------------------------------------

    def flags(self, message: DisplayMessage) -> tuple[bool, bool]:
        """Whether ``message`` is the chat's last message of yours, and its last answer. Read
        from the end, so it costs a few steps however long the chat (it runs on every paint)."""
        if self.rows.newest_released:  # the chat's last messages are not here
            return False, False
        last_user = last_answer = None
        for row in reversed(self.rows.messages):
            shown = row.into or row  # a continuation is its reply's; a continue prompt is no one's
            if shown.continues is not None:
                continue
            if last_user is None and shown.kind == "user":
                last_user = shown
            if last_answer is None and shown.kind in ("assistant", "error"):
                last_answer = shown
            if last_user is not None and last_answer is not None:
                break
        return last_user is message, last_answer is message

    def _column(self) -> tuple[float, float]:
        """The conversation column's left edge and width."""
        return column_of(self.view.viewport().width())

    def _text_width(self, message: DisplayMessage) -> int:
        return text_width(message, self._column()[1])

    def document(self, message: DisplayMessage) -> tuple[StackedDocument, list[str]]:
        width = self._text_width(message)
        # Only an error's document (Retry, or folded) and a reply's with calls still running
        # depend on whether it is the chat's last answer: anything else is never built again
        # because a message came after it.
        running = len(message.settled) < len(message.tool_calls)
        flags = self.flags(message) if message.kind == "error" or running else (False, False)
        document, code_blocks = self.documents.document(
            message, width, dark=self.dark, flags=flags, marks=self.highlight
        )
        button_flags = self.flags(message) if has_button_row(message) else (False, False)
        self._note_height(message, width, self._height(message, document), button_flags)
        return document, code_blocks

    def adopt(self, old_key: str, message: DisplayMessage) -> None:
        """A reply that streamed as ``old_key`` is saved as ``message``: its document is kept."""
        self.documents.adopt(old_key, message)

    def _grew(self, key: str) -> None:
        """A long message's document grew a step: its row is measured again."""
        row = self.rows.row_of(key)
        if row is not None:
            self.document(self.rows.messages[row])
            self.view.update(self.view.model().index(row, 0))

    def _height(self, message: DisplayMessage, document: StackedDocument) -> int:
        height = math.ceil(document.size().height()) + GAP
        if message.kind == "user" or message.kind in CARDS:
            height += 2 * PAD
        if has_button_row(message):
            height += ACTIONS
        return height

    def _note_height(self, message: DisplayMessage, width: int, height: int, flags: tuple[bool, bool]) -> None:
        """Remember a measured height; tell the view when it differs from what it laid out."""
        old = self._heights.get(message.key)
        self._heights[message.key] = ((message.version, width, *flags, message.reasoning_open), height)
        # Laid out at an estimate, or at an older height: the view must take the measured one.
        if (old is None and message.key in self._estimated) or (old is not None and old[1] != height):
            self._estimated.discard(message.key)
            self._sizes.pop(message.key, None)
            if self._measuring:
                return
            # Told once the paint under way ends: a layout now, in the middle of a paint, would
            # be followed by another for the next row measured, each over the whole chat.
            if not self._resize_due:
                self._resize_due = True
                QTimer.singleShot(0, self._resized)

    def measure(self, message: DisplayMessage) -> bool:
        """Measure ``message`` before it comes into view, so that its size is right when it
        does; whether that changed a height the view has laid out (it then needs a layout)."""
        if message.status == "streaming" or message.folded:
            return False
        laid_out = message.key in self._sizes
        self._measuring = True
        try:
            self.document(message)
        finally:
            self._measuring = False
        return laid_out and message.key not in self._sizes

    def estimated(self, message: DisplayMessage) -> bool:
        """Whether ``message`` was laid out at an estimate and is not measured yet."""
        return message.key in self._estimated

    def laid_out(self) -> None:
        """The view has just laid out every row: the sizes measured so far are all taken."""
        self._resize_due = False

    def _resized(self) -> None:
        if not self._resize_due:
            return
        self._resize_due = False
        self.resized.emit()

    def code_blocks(self, message: DisplayMessage) -> list[str]:
        return self.document(message)[1]

    # -- sizing --------------------------------------------------------------------------

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        # A layout asks every row, and a long chat lays out often (a page prepended, a row
        # measured): answer from the last size while the row and the view's width are the same.
        messages = self.rows.messages
        row = index.row()
        message: DisplayMessage = messages[row] if 0 <= row < len(messages) else index.data(MESSAGE_ROLE)
        if row == 0:  # a layout starts from the first row: the view's width is read once for it
            self._width = self.view.viewport().width()
        view_width = self._width
        last = self._sizes.get(message.key)
        if last is not None and last[0] == (message.version, view_width):
            return last[1]
        size = self._size(message, row, view_width)
        self._sizes[message.key] = ((message.version, view_width), size)
        return size

    def _size(self, message: DisplayMessage, row: int, view_width: int) -> QSize:
        if message.folded:  # shown in the reply it continues, or not at all
            return QSize(view_width, 0)
        width = self._text_width(message)
        known = self._heights.get(message.key)
        if known is not None and known[0][:2] == (message.version, width):
            height = known[1]
        elif self._near_viewport(row):
            height = self._height(message, self.document(message)[0])
        else:
            stamp = (message.version, width, self.view.font().pointSize())
            guessed = self._guesses.get(message.key)
            if guessed is None or guessed[0] != stamp:  # a layout asks again for every row: keep it
                guessed = (stamp, estimated_height(message, width, self.view.fontMetrics()))
                self._guesses[message.key] = guessed
            height = guessed[1]
            self._estimated.add(message.key)
        return QSize(view_width, height)

    def _near_viewport(self, row: int) -> bool:
        return row >= len(self.rows.messages) - 12  # the newest rows open in view; measure them exactly

    # -- geometry ------------------------------------------------------------------------

    def geometry(self, message: DisplayMessage, row: QRect, document: StackedDocument) -> Geometry:
        flags = self.flags(message) if has_button_row(message) else (False, False)
        metrics = self.view.fontMetrics()
        return message_geometry(message, row, document.size(), column=self._column(), metrics=metrics, flags=flags)

    # -- painting ------------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        message: DisplayMessage = index.data(MESSAGE_ROLE)
        if message.folded:
            return
        document, _ = self.document(message)
        geometry = self.geometry(message, option.rect, document)
        t = self.tokens
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        background = self._background(message)
        if background is not None:
            painter.setPen(QPen(QColor(t.border), 1) if message.kind in CARDS else Qt.PenStyle.NoPen)
            painter.setBrush(QColor(background))
            radius = RADIUS["l"] if message.kind == "user" else RADIUS["m"]
            painter.drawRoundedRect(geometry.box, radius, radius)
        # Only what is in view is drawn: a long message's row reaches far past the viewport.
        shown = QRectF(option.rect.intersected(self.view.viewport().rect())).translated(-geometry.text)
        painter.translate(geometry.text)
        document.drawContents(painter, shown.intersected(QRectF(QPointF(0, 0), document.size())))
        painter.restore()
        if message.status == "streaming" and message.kind == "assistant":  # "writing…" turns under it
            y = geometry.box.bottom() + 2 + (ACTIONS - 2 - SPINNER) / 2
            self.spinner.paint(painter, QRectF(geometry.box.left(), y, SPINNER, SPINNER), t.accent)
        if message.status != "streaming":
            self._paint_switcher(painter, geometry, message)
            if message.key == self.hovered or self.flags(message)[1]:
                self._paint_buttons(painter, geometry, message)  # the last answer's buttons always show

    def _background(self, message: DisplayMessage) -> str | None:
        t = self.tokens
        if message.kind == "error" and not self.flags(message)[1]:
            return None  # an error that was retried or left behind: one quiet line
        return {
            "user": t.user_bubble,
            "error": t.danger_soft,
            "approval": t.warning_soft,
            "tool": t.surface_alt,
            "summary": t.info_soft,
        }.get(message.kind)

    def _paint_switcher(self, painter: QPainter, geometry: Geometry, message: DisplayMessage) -> None:
        """The switcher (arrows either side of "1/2") under a message with other versions; an arrow
        with nowhere to go is faint."""
        if geometry.switcher is None or message.versions is None:
            return
        t = self.tokens
        earlier, position, later = geometry.switcher
        which, count = message.versions
        painter.save()
        for name, rect, enabled in (("version-prev", earlier, which > 1), ("version-next", later, which < count)):
            pixmap = icon(name, t.text if enabled else t.border_strong).pixmap(ICON, ICON)
            target = QRectF(rect.center().x() - ICON / 2, rect.center().y() - ICON / 2, ICON, ICON)
            painter.drawPixmap(target, pixmap, QRectF(pixmap.rect()))
        painter.setPen(QColor(t.muted))
        painter.drawText(position, int(Qt.AlignmentFlag.AlignCenter), f"{which}/{count}")
        painter.restore()

    def _paint_buttons(self, painter: QPainter, geometry: Geometry, message: DisplayMessage) -> None:
        t = self.tokens
        painter.save()
        for action, rect in geometry.buttons:
            if action.name.startswith("version-"):
                continue  # drawn with the switcher
            pixmap = icon(action.name, t.muted).pixmap(ICON, ICON)
            painter.drawPixmap(
                QRectF(rect.center().x() - ICON / 2, rect.center().y() - ICON / 2, ICON, ICON),
                pixmap,
                QRectF(pixmap.rect()),
            )
        if geometry.time is not None and message.key == self.hovered:
            painter.setPen(QColor(t.muted))
            painter.drawText(geometry.time, int(Qt.AlignmentFlag.AlignVCenter), shown_time(message.created_at)[0])
        painter.restore()

    # -- links and buttons ---------------------------------------------------------------

    def hit(self, index: Index, row: QRect, pos: QPointF) -> tuple[str, str]:
        """What is at ``pos``: ``("button", name)``, ``("link", href)``, ``("time", full)`` or empty."""
        message: DisplayMessage = index.data(MESSAGE_ROLE)
        if message.folded:
            return "", ""
        document, _ = self.document(message)
        geometry = self.geometry(message, row, document)
        for action, rect in geometry.buttons:
            if rect.contains(pos):
                return "button", action.name
        if geometry.time is not None and geometry.time.contains(pos):
            return "time", shown_time(message.created_at)[1]
        local = pos - geometry.text
        anchor = document.anchor_at(local)
        return ("link", anchor) if anchor else ("", "")

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: Index) -> bool:
        if not isinstance(event, QMouseEvent):
            return False
        kind, what = self.hit(index, option.rect, event.position())
        clicked = event.type() == QEvent.Type.MouseButtonRelease and event.button() == Qt.MouseButton.LeftButton
        if clicked and (kind == "button" or (kind == "link" and what.startswith("cairn:"))):
            self.action.emit(index.data(MESSAGE_ROLE).key, what.removeprefix("cairn:"))
            return True
        if event.type() == QEvent.Type.MouseMove:
            pointing = kind == "button" or (kind == "link" and bool(what))
            self.view.viewport().setCursor(
                Qt.CursorShape.PointingHandCursor if pointing else Qt.CursorShape.ArrowCursor
            )
        return False

    def helpEvent(self, event: QHelpEvent, view: QAbstractItemView, option: QStyleOptionViewItem, index: Index) -> bool:
        if event.type() == QEvent.Type.ToolTip and index.isValid():
            kind, what = self.hit(index, option.rect, QPointF(event.pos()))
            message: DisplayMessage = index.data(MESSAGE_ROLE)
            tip = ""
            if kind == "button":
                last_user, last_answer = self.flags(message)
                tips = {a.name: a.tip for a in message_actions(message, last_user=last_user, last_answer=last_answer)}
                tip = tips.get(what, "")
            elif kind == "time":
                tip = what
            if tip:
                QToolTip.showText(event.globalPos(), tip, view)
                return True
            QToolTip.hideText()
            return True
        return super().helpEvent(event, view, option, index)
