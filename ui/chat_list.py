"""The list of chats in the sidebar: grouped under headers, with the archive folded away.

Headers are items of their own that can never be selected; the arrow keys, Page Up and Down,
Home and End step over them. The Archived header is the exception that keeps the archive
reachable from the keyboard: it takes the cursor, and Enter, Space or a click opens or folds
it. While the list holds only one group of live chats (every chat is from today, say), its
header says nothing and is left out. Search results are listed flat, as found.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QListWidget,
    QListWidgetItem,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from ui.chat_groups import ChatGroup, Found, GroupKey, group_chats
from ui.icons import icon
from ui.theme import SPACE, tokens_of

__all__ = ["HEADER_ROLE", "TITLE_ROLE", "ChatList"]

TITLE_ROLE = Qt.ItemDataRole.UserRole + 1  # the chat's whole title, however it is shown
HEADER_ROLE = Qt.ItemDataRole.UserRole + 2  # a header's group key; None on a chat
ARCHIVED_ROLE = Qt.ItemDataRole.UserRole + 3  # whether a chat is archived
PINNED_ROLE = Qt.ItemDataRole.UserRole + 4  # whether a chat is pinned
CURSOR_KEYS = {
    QAbstractItemView.CursorAction.MoveUp: -1,
    QAbstractItemView.CursorAction.MovePrevious: -1,
    QAbstractItemView.CursorAction.MovePageUp: -1,
    QAbstractItemView.CursorAction.MoveHome: 1,  # to the first chat, below the first header
    QAbstractItemView.CursorAction.MoveDown: 1,
    QAbstractItemView.CursorAction.MoveNext: 1,
    QAbstractItemView.CursorAction.MovePageDown: 1,
    QAbstractItemView.CursorAction.MoveEnd: -1,
}


def local_now() -> datetime:
    return datetime.now().astimezone()


class ChatList(QListWidget):
    """Chats in their groups; ``UserRole`` holds a chat's id (``None`` on a header)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.now: Callable[[], datetime] = local_now  # a seam: tests group with their own clock
        self.archive_open = False
        self.setItemDelegate(HeaderDelegate(self))
        self.itemClicked.connect(self._clicked)

    # -- filling -------------------------------------------------------------------------

    def fill(self, found: Sequence[Found], current: str | None, *, grouped: bool) -> None:
        """Show ``found`` (grouped, or flat for search results) with ``current`` selected."""
        self.clear()
        groups = group_chats(found, self.now()) if grouped else [ChatGroup("today", tuple(found))]
        live = [g for g in groups if g.key != "archived"]
        chosen: QListWidgetItem | None = None
        for group in groups:
            archived = group.key == "archived"
            if archived or len(live) > 1:
                self.addItem(self._header(group))
            for record, snippet in group.chats:
                item = _chat_item(record.id, record.title, record.updated_at, snippet)
                item.setData(ARCHIVED_ROLE, archived)
                item.setData(PINNED_ROLE, record.pinned_at is not None and not archived)
                self.addItem(item)
                if record.id == current:
                    chosen = item
                    self.archive_open = self.archive_open or archived  # the chat on screen stays in view
        self._show_archive()
        if chosen is not None:
            self.setCurrentItem(chosen)

    def _header(self, group: ChatGroup) -> QListWidgetItem:
        text = f"{group.title} ({len(group.chats)})" if group.key == "archived" else group.title
        item = QListWidgetItem(text)
        item.setData(HEADER_ROLE, group.key)
        item.setData(Qt.ItemDataRole.UserRole, None)
        # Never selectable; only the Archived header, a switch, is enabled (it takes the cursor).
        item.setFlags(Qt.ItemFlag.ItemIsEnabled if group.key == "archived" else Qt.ItemFlag.NoItemFlags)
        return item

    # -- the archive ---------------------------------------------------------------------

    def toggle_archive(self) -> None:
        self.archive_open = not self.archive_open
        self._show_archive()

    def _show_archive(self) -> None:
        for row in range(self.count()):
            item = self.item(row)
            if item.data(HEADER_ROLE) == "archived":
                state = "open" if self.archive_open else "folded"
                item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{item.text()}, {state}; Enter opens or folds it")
            elif item.data(ARCHIVED_ROLE):
                item.setHidden(not self.archive_open)

    def _clicked(self, item: QListWidgetItem) -> None:
        if item.data(HEADER_ROLE) == "archived":
            self.toggle_archive()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        item = self.currentItem()
        toggles = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
        if toggles and item is not None and item.data(HEADER_ROLE) == "archived":
            self.toggle_archive()
            return
        super().keyPressEvent(event)

    # -- the keyboard steps over headers -------------------------------------------------

    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:
        index = super().moveCursor(action, modifiers)
        step = CURSOR_KEYS.get(action)
        if step is None or not index.isValid() or self._stops_at(index.row()):
            return index
        for direction in (step, -step):  # past the header; at the list's end, back the other way
            row = index.row() + direction
            while 0 <= row < self.count() and not self._stops_at(row):
                row += direction
            if 0 <= row < self.count():
                return self.model().index(row, 0)
        return self.currentIndex()

    def _stops_at(self, row: int) -> bool:
        item = self.item(row)
        return not item.isHidden() and (item.data(HEADER_ROLE) in (None, "archived"))

    # -- reading -------------------------------------------------------------------------

    def chat_ids(self) -> list[str]:
        """The chats listed, in order, shown or folded away in the archive."""
        return [i for row in range(self.count()) if (i := self.item(row).data(Qt.ItemDataRole.UserRole))]

    def headers(self) -> list[str]:
        return [item.text() for row in range(self.count()) if (item := self.item(row)).data(HEADER_ROLE)]

    def item_of(self, session_id: str) -> QListWidgetItem | None:
        return next(
            (
                item
                for row in range(self.count())
                if (item := self.item(row)).data(Qt.ItemDataRole.UserRole) == session_id
            ),
            None,
        )


def _chat_item(session_id: str, title: str, updated_at: str, snippet: str) -> QListWidgetItem:
    shown = title or "Untitled chat"
    item = QListWidgetItem(shown)
    item.setData(Qt.ItemDataRole.UserRole, session_id)
    item.setData(TITLE_ROLE, title)
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
    tip = f"{shown}\nLast active {updated_at[:16].replace('T', ' ')} UTC"
    item.setToolTip(f"{tip}\n{snippet}" if snippet else tip)
    return item


class HeaderDelegate(QStyledItemDelegate):
    """Paints a header as a small muted label (the Archived one with its caret); chats as the
    style sheet says."""

    def __init__(self, chats: ChatList) -> None:
        super().__init__(chats)
        self.chats = chats

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        key: GroupKey | None = index.data(HEADER_ROLE)
        if key is None:
            super().paint(painter, option, index)
            return
        tokens = tokens_of(self.chats)
        rect: QRect = option.rect
        painter.save()
        painter.setFont(_header_font(option.font))
        painter.setPen(QColor(tokens.muted))
        left = rect.left() + SPACE["s"]
        if key == "archived":
            caret = "caret-down" if self.chats.archive_open else "caret-right"
            side = QFontMetrics(painter.font()).height()
            icon(caret, tokens.muted).paint(painter, QRect(left, rect.bottom() - side - 2, side, side))
            left += side + SPACE["xs"]
        text_rect = QRect(left, rect.top(), rect.right() - left - SPACE["s"], rect.height() - 2)
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom, str(index.data()))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        if index.data(HEADER_ROLE) is None:
            return size
        height = QFontMetrics(_header_font(option.font)).height()
        top = SPACE["xs"] if index.row() == 0 else SPACE["m"]
        return QSize(size.width(), height + top + SPACE["xs"])


def _header_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setPointSizeF(max(base.pointSizeF() - 1, 7))
    font.setWeight(QFont.Weight.DemiBold)
    return font
