"""The chat view: a list model of messages, painted by a delegate that builds a message's
document only when it comes near the viewport.

Rows far from the viewport are sized by a cheap estimate; a row's exact height is measured
the first time it is painted, and the view is told when that differs. Links inside a message
("Copy", "Retry", "Reasoning", ...) are its actions.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QAbstractItemView, QListView, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from ui.live_document import LiveDocument
from ui.messages import DisplayMessage, message_html
from ui.search_marks import mark_words

__all__ = ["ChatView", "MessageDelegate", "MessageModel"]

MESSAGE_ROLE = Qt.ItemDataRole.UserRole + 1
MARGIN = 10
PADDING = 12
CACHE_SIZE = 400

Index = QModelIndex | QPersistentModelIndex


class MessageModel(QAbstractListModel):
    """The messages of one session as the view shows them, oldest first."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.messages: list[DisplayMessage] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.messages)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.messages):
            return None
        message = self.messages[index.row()]
        if role == MESSAGE_ROLE:
            return message
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return f"{message.kind}: {message.text or message.error}"
        return None

    def reset(self, messages: list[DisplayMessage]) -> None:
        self.beginResetModel()
        self.messages = messages
        self.endResetModel()

    def prepend(self, messages: list[DisplayMessage]) -> None:
        if messages:
            self.beginInsertRows(QModelIndex(), 0, len(messages) - 1)
            self.messages[:0] = messages
            self.endInsertRows()

    def append(self, message: DisplayMessage) -> None:
        self.beginInsertRows(QModelIndex(), len(self.messages), len(self.messages))
        self.messages.append(message)
        self.endInsertRows()

    def remove(self, key: str) -> None:
        row = self.row_of(key)
        if row is not None:
            self.beginRemoveRows(QModelIndex(), row, row)
            del self.messages[row]
            self.endRemoveRows()

    def replace(self, key: str, message: DisplayMessage) -> None:
        row = self.row_of(key)
        if row is None:
            self.append(message)
        else:
            self.messages[row] = message
            self.changed(row)

    def changed(self, row: int) -> None:
        index = self.index(row)
        self.dataChanged.emit(index, index)

    def row_of(self, key: str) -> int | None:
        for row in range(len(self.messages) - 1, -1, -1):
            if self.messages[row].key == key:
                return row
        return None

    def last_of(self, kind: str) -> DisplayMessage | None:
        return next((m for m in reversed(self.messages) if m.kind == kind), None)


class MessageDelegate(QStyledItemDelegate):
    """Paints messages and turns clicks on their links into ``action(key, name)``."""

    action = Signal(str, str)

    def __init__(self, view: ChatView) -> None:
        super().__init__(view)
        self.view = view
        self.dark = False
        self._docs: OrderedDict[str, tuple[tuple[Any, ...], QTextDocument, list[str]]] = OrderedDict()
        self._heights: dict[str, tuple[tuple[Any, ...], int]] = {}
        self._estimated: set[str] = set()  # rows laid out at an estimate, not yet measured
        self._live: dict[str, LiveDocument] = {}
        self.highlight: tuple[str, ...] = ()  # words marked in every message: a search's

    def clear(self) -> None:
        self._docs.clear()
        self._heights.clear()
        self._estimated.clear()
        self._live.clear()

    # -- documents -----------------------------------------------------------------------

    def _flags(self, message: DisplayMessage) -> tuple[bool, bool]:
        model = self.view.model()
        assert isinstance(model, MessageModel)
        last_user = model.last_of("user") is message
        answers = [m for m in model.messages if m.kind in ("assistant", "error")]
        return last_user, bool(answers) and answers[-1] is message

    def _text_width(self) -> int:
        return max(self.view.viewport().width() - 2 * (MARGIN + PADDING), 120)

    def _live_document(self, message: DisplayMessage, width: int) -> tuple[QTextDocument, list[str]]:
        waited = None if message.waited is None or message.text or message.reasoning else int(message.waited)
        stamp = (width, self.dark, bool(message.reasoning), message.reasoning_open, waited)
        live = self._live.get(message.key)
        if live is None or live.owner is not message or live.stamp != stamp:  # type: ignore[attr-defined]
            shown = replace(message, text="", waited=waited)  # the header alone; "reading…" until text comes
            header, _ = message_html(shown, dark=self.dark, last_user=False, last_answer=False)
            live = LiveDocument(header, font=self.view.font(), width=width, dark=self.dark, owner=message)
            live.stamp = stamp  # type: ignore[attr-defined]
            self._live[message.key] = live
        live.update(message.text, message.version)
        return live.document, live.all_code_blocks()

    def document(self, message: DisplayMessage) -> tuple[QTextDocument, list[str]]:
        width = self._text_width()
        if message.status == "streaming":
            document, code_blocks = self._live_document(message, width)
            self._note_height(message, width, math.ceil(document.size().height()), (False, False))
            return document, code_blocks
        self._live.pop(message.key, None)
        last_user, last_answer = self._flags(message)
        stamp = (message.version, width, self.dark, last_user, last_answer, message.reasoning_open, self.highlight)
        cached = self._docs.get(message.key)
        if cached is not None and cached[0] == stamp:
            self._docs.move_to_end(message.key)
            return cached[1], cached[2]
        body, code_blocks = message_html(message, dark=self.dark, last_user=last_user, last_answer=last_answer)
        document = QTextDocument()
        document.setDocumentMargin(0)
        document.setDefaultFont(self.view.font())
        document.setHtml(body)
        if self.highlight:
            mark_words(document, self.highlight, dark=self.dark)
        document.setTextWidth(width)
        self._docs[message.key] = (stamp, document, code_blocks)
        if len(self._docs) > CACHE_SIZE:
            self._docs.popitem(last=False)
        self._note_height(message, width, math.ceil(document.size().height()), (last_user, last_answer))
        return document, code_blocks

    def _note_height(self, message: DisplayMessage, width: int, height: int, flags: tuple[bool, bool]) -> None:
        """Remember a measured height; tell the view when it differs from what it laid out."""
        old = self._heights.get(message.key)
        self._heights[message.key] = ((message.version, width, *flags, message.reasoning_open), height)
        # Laid out at an estimate, or at an older height: the view must take the measured one.
        if (old is None and message.key in self._estimated) or (old is not None and old[1] != height):
            self._estimated.discard(message.key)
            row = self.view.model_rows().row_of(message.key)
            if row is not None:
                self.sizeHintChanged.emit(self.view.model().index(row, 0))

    def code_blocks(self, message: DisplayMessage) -> list[str]:
        return self.document(message)[1]

    # -- sizing and painting -------------------------------------------------------------

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        message: DisplayMessage = index.data(MESSAGE_ROLE)
        width = self._text_width()
        known = self._heights.get(message.key)
        if known is not None and known[0][:2] == (message.version, width):
            height = known[1]
        elif self._near_viewport(index.row()):
            height = math.ceil(self.document(message)[0].size().height())
        else:
            height = self._estimate(message, width)
            self._estimated.add(message.key)
        return QSize(width + 2 * (MARGIN + PADDING), height + 2 * PADDING + MARGIN)

    def _near_viewport(self, row: int) -> bool:
        model = self.view.model_rows()
        return row >= len(model.messages) - 12  # the newest rows open in view; measure them exactly

    def _estimate(self, message: DisplayMessage, width: int) -> int:
        metrics = self.view.fontMetrics()
        per_line = max(width // max(metrics.averageCharWidth(), 1), 20)
        if message.kind == "summary" and not message.expanded:
            return 2 * metrics.lineSpacing()  # the marker's one line; its summary shows when opened
        text = message.text or message.error or ""
        lines = 2 + sum(max(1, math.ceil(len(line) / per_line)) for line in text.split("\n"))
        lines += sum(3 + len(args) for _, args in message.tool_calls)
        if message.tool_result is not None:
            lines += 3 + min(message.tool_result.content.count("\n"), 60)
        if message.approval is not None:
            lines += 6
        return lines * metrics.lineSpacing()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        message: DisplayMessage = index.data(MESSAGE_ROLE)
        document, _ = self.document(message)
        rect = option.rect.adjusted(MARGIN, MARGIN // 2, -MARGIN, -MARGIN // 2)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self._bubble(message))
        painter.drawRoundedRect(QRectF(rect), 8, 8)
        painter.translate(rect.left() + PADDING, rect.top() + PADDING)
        document.drawContents(painter, QRectF(0, 0, rect.width() - 2 * PADDING, rect.height() - 2 * PADDING))
        painter.restore()

    def _bubble(self, message: DisplayMessage) -> QColor:
        base = self.view.palette().color(QPalette.ColorRole.Base)
        shades = {"user": 112, "assistant": 104, "tool": 108, "error": 104, "approval": 104}
        shade = shades.get(message.kind, 104)
        colour = base.darker(shade) if not self.dark else base.lighter(shade + 40)
        if message.kind == "error":
            colour = QColor("#3a2224") if self.dark else QColor("#fdecea")
        elif message.kind == "approval":
            colour = QColor("#3a3322") if self.dark else QColor("#fff8e1")
        elif message.kind == "summary":
            colour = QColor("#23303a") if self.dark else QColor("#eef4f8")
        return colour

    # -- links ---------------------------------------------------------------------------

    def anchor_at(self, index: Index, option_rect: Any, pos: QPointF) -> str:
        message: DisplayMessage = index.data(MESSAGE_ROLE)
        document, _ = self.document(message)
        local = QPointF(
            pos.x() - option_rect.left() - MARGIN - PADDING, pos.y() - option_rect.top() - MARGIN // 2 - PADDING
        )
        return document.documentLayout().anchorAt(local)

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: Index) -> bool:
        if event.type() == QEvent.Type.MouseButtonRelease and isinstance(event, QMouseEvent):
            anchor = self.anchor_at(index, option.rect, event.position())
            if anchor.startswith("cairn:"):
                self.action.emit(index.data(MESSAGE_ROLE).key, anchor.removeprefix("cairn:"))
                return True
        if event.type() == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            anchor = self.anchor_at(index, option.rect, event.position())
            self.view.viewport().setCursor(Qt.CursorShape.PointingHandCursor if anchor else Qt.CursorShape.ArrowCursor)
        return False


class ChatView(QListView):
    """The list of messages; asks for older ones when scrolled to the top."""

    wants_older = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Conversation")
        self.setModel(MessageModel(self))
        self.message_delegate = MessageDelegate(self)
        self.setItemDelegate(self.message_delegate)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setUniformItemSizes(False)
        self.setMouseTracking(True)
        self.setFrameShape(QListView.Shape.NoFrame)
        self.verticalScrollBar().setSingleStep(24)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self._follow = True

    def model_rows(self) -> MessageModel:
        model = self.model()
        assert isinstance(model, MessageModel)
        return model

    def at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4

    def _scrolled(self, value: int) -> None:
        self._follow = self.at_bottom()
        if value == 0 and self.model_rows().messages:
            self.wants_older.emit()

    def follow(self) -> None:
        """Keep the newest message in view, unless the person scrolled away."""
        if self._follow:
            self.scrollToBottom()

    def jump_to_bottom(self) -> None:
        self._follow = True
        self.scrollToBottom()
