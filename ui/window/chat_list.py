"""The list of chats in the sidebar: grouped under headers, with the archive folded away.

Headers are rows of their own that can never be selected; the arrow keys, Page Up and Down,
Home and End step over them. The Archived header is the exception that keeps the archive
reachable from the keyboard: it takes the cursor, and Enter, Space or a click opens or folds
it. While the list holds only one group of live chats (every chat is from today, say), its
header says nothing and is left out. Search results are listed flat, as found, each with the
snippet of where it matched on a line under its title (``ui.window.snippets``).

A lifetime of use is tens of thousands of chats, so the list is a model over the journal's
records (nothing is made per chat until it is painted or asked about) and every row, a header
too, is one height, so the view lays out the list without asking each row for its size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QKeyEvent, QMouseEvent, QPainter
from PySide6.QtWidgets import QAbstractItemView, QListView, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from desktop.app import NO_SNIPPET, SessionRecord, Snippet
from ui.widgets.icons import icon
from ui.widgets.theme import SPACE, tokens_of
from ui.window.chat_groups import GROUP_TITLES, ChatGroup, Found, GroupKey, group_chats
from ui.window.snippets import paint_snippet, snippet_font

__all__ = [
    "ARCHIVED_ROLE",
    "HEADER_ROLE",
    "ID_ROLE",
    "PINNED_ROLE",
    "SNIPPET_ROLE",
    "TITLE_ROLE",
    "ChatList",
    "ChatListModel",
]

Index = QModelIndex | QPersistentModelIndex
ID_ROLE = Qt.ItemDataRole.UserRole  # a chat's id; None on a header
TITLE_ROLE = Qt.ItemDataRole.UserRole + 1  # the chat's whole title, however it is shown
HEADER_ROLE = Qt.ItemDataRole.UserRole + 2  # a header's group key; None on a chat
ARCHIVED_ROLE = Qt.ItemDataRole.UserRole + 3  # whether a chat is archived
PINNED_ROLE = Qt.ItemDataRole.UserRole + 4  # whether a chat is pinned
SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 5  # a search result's snippet (maybe empty); None when not searching
UNTITLED = "Untitled chat"
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


@dataclass(frozen=True, slots=True)
class Row:
    """A header (``record`` is None) or a chat under the group ``key``."""

    key: GroupKey
    record: SessionRecord | None = None
    snippet: Snippet = NO_SNIPPET
    count: int = 0  # a header's number of chats


class ChatListModel(QAbstractListModel):
    """The rows of the list; the archived chats, always the last block, are left out while the
    archive is folded. Renaming a chat in place asks for it through ``renamed``: the title
    changes when the journal says it did."""

    renamed = Signal(str, str)  # session id, the title typed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []  # every row, the folded archive's too
        self.shown = 0  # how many of them are in the list
        self.archive_open = False
        self.searching = False  # rows are a search's results: each has a line for its snippet

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else self.shown

    def fill(self, rows: list[Row]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.shown = self._shown()
        self.endResetModel()

    def set_archive_open(self, open_: bool) -> None:
        self.archive_open = open_
        shown = self._shown()
        if shown > self.shown:
            self.beginInsertRows(QModelIndex(), self.shown, shown - 1)
            self.shown = shown
            self.endInsertRows()
        elif shown < self.shown:
            self.beginRemoveRows(QModelIndex(), shown, self.shown - 1)
            self.shown = shown
            self.endRemoveRows()
        header = next((n for n, row in enumerate(self.rows) if row.record is None and row.key == "archived"), None)
        if header is not None:
            self.dataChanged.emit(self.index(header), self.index(header))

    def _shown(self) -> int:
        if self.archive_open:
            return len(self.rows)
        return next(
            (n for n, row in enumerate(self.rows) if row.record is not None and row.key == "archived"), len(self.rows)
        )

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self.shown:
            return None
        row = self.rows[index.row()]
        record = row.record
        if record is None:
            return self._header_data(row, role)
        if role in (SNIPPET_ROLE, Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.AccessibleTextRole):
            return self._found_data(row, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return record.title or UNTITLED
        if role in (Qt.ItemDataRole.EditRole, TITLE_ROLE):
            return record.title
        if role == ID_ROLE:
            return record.id
        if role == ARCHIVED_ROLE:
            return record.archived_at is not None
        if role == PINNED_ROLE:
            return record.pinned_at is not None and record.archived_at is None
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{record.title or UNTITLED}\nLast active {record.updated_at[:16].replace('T', ' ')} UTC"
        return None

    def _found_data(self, row: Row, role: int) -> Any:
        """What a search adds to a chat's row: its snippet, on a line under the title."""
        title = row.record.title if row.record is not None and row.record.title else UNTITLED
        if role == Qt.ItemDataRole.AccessibleTextRole:
            found = "".join(text for text, _ in row.snippet)
            return f"{title}: {found}" if found else title
        if not self.searching:
            return None
        if role == SNIPPET_ROLE:
            return row.snippet
        return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop  # the title, above its snippet

    def _header_data(self, row: Row, role: int) -> Any:
        text = f"{GROUP_TITLES[row.key]} ({row.count})" if row.key == "archived" else GROUP_TITLES[row.key]
        if role == Qt.ItemDataRole.DisplayRole:
            return text
        if role == HEADER_ROLE:
            return row.key
        if role == Qt.ItemDataRole.AccessibleTextRole:
            if row.key != "archived":
                return text
            state = "open" if self.archive_open else "folded"
            return f"{text}, {state}; Enter opens or folds it"
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid() or not 0 <= index.row() < self.shown:
            return Qt.ItemFlag.NoItemFlags
        row = self.rows[index.row()]
        if row.record is None:  # never selectable; the Archived header, a switch, takes the cursor
            return Qt.ItemFlag.ItemIsEnabled if row.key == "archived" else Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or not 0 <= index.row() < self.shown:
            return False
        record = self.rows[index.row()].record
        if record is None or not isinstance(value, str):
            return False
        self.renamed.emit(record.id, value)
        return True

    def row_of(self, session_id: str) -> int | None:
        """The row of the chat ``session_id``, folded in the archive or not; None if not listed."""
        return next(
            (n for n, row in enumerate(self.rows) if row.record is not None and row.record.id == session_id), None
        )


class ChatList(QListView):
    """Chats in their groups; ``ID_ROLE`` holds a chat's id (``None`` on a header)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.now: Callable[[], datetime] = local_now  # a seam: tests group with their own clock
        self.setObjectName("Chats")  # the style sheet's name for it
        self.chats = ChatListModel(self)
        self.setModel(self.chats)
        self.setUniformItemSizes(True)  # a header is a chat's height: no row is asked its size
        self.setItemDelegate(HeaderDelegate(self))
        self.clicked.connect(self._clicked)

    @property
    def archive_open(self) -> bool:
        return self.chats.archive_open

    # -- filling -------------------------------------------------------------------------

    def fill(self, found: Sequence[Found], current: str | None, *, grouped: bool) -> None:
        """Show ``found`` (grouped, or flat for search results) with ``current`` selected."""
        groups = group_chats(found, self.now()) if grouped else [ChatGroup("today", tuple(found))]
        live = sum(1 for g in groups if g.key != "archived")
        rows: list[Row] = []
        open_archive = self.chats.archive_open
        for group in groups:
            if group.key == "archived" or live > 1:
                rows.append(Row(group.key, count=len(group.chats)))
            key: GroupKey = "today" if not grouped else group.key
            rows.extend(Row(key, record, snippet) for record, snippet in group.chats)
            if group.key == "archived" and any(record.id == current for record, _ in group.chats):
                open_archive = True  # the chat on screen stays in view
        self.chats.archive_open = open_archive
        self.chats.searching = not grouped
        self.chats.fill(rows)
        row = self.chats.row_of(current) if current else None
        self.setCurrentIndex(self.chats.index(row) if row is not None else QModelIndex())  # none: a new chat

    # -- the archive ---------------------------------------------------------------------

    def toggle_archive(self) -> None:
        self.chats.set_archive_open(not self.chats.archive_open)

    def _clicked(self, index: QModelIndex) -> None:
        if index.data(HEADER_ROLE) == "archived":
            self.toggle_archive()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        # A right-click is for the chat's menu (the context menu event that follows): it does
        # not make the chat current, which would open it.
        if event.button() == Qt.MouseButton.RightButton:
            event.accept()
            return
        super().mousePressEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        current = self.currentIndex()
        toggles = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space)
        if toggles and current.isValid() and current.data(HEADER_ROLE) == "archived":
            self.toggle_archive()
            return
        super().keyPressEvent(event)

    # -- the keyboard steps over headers -------------------------------------------------

    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier) -> QModelIndex:
        index = super().moveCursor(action, modifiers)
        step = CURSOR_KEYS.get(action)
        if step is None or not index.isValid() or self._stops_at(index.row()):
            return index
        count = self.chats.rowCount()
        for direction in (step, -step):  # past the header; at the list's end, back the other way
            row = index.row() + direction
            while 0 <= row < count and not self._stops_at(row):
                row += direction
            if 0 <= row < count:
                return self.chats.index(row)
        return self.currentIndex()

    def _stops_at(self, row: int) -> bool:
        return self.chats.index(row).data(HEADER_ROLE) in (None, "archived")

    # -- reading -------------------------------------------------------------------------

    def count(self) -> int:
        """The rows shown, headers included."""
        return self.chats.rowCount()

    def current_id(self) -> str | None:
        session_id: str | None = self.currentIndex().data(ID_ROLE)
        return session_id

    def chat_ids(self) -> list[str]:
        """The chats listed, in order, shown or folded away in the archive."""
        return [row.record.id for row in self.chats.rows if row.record is not None]

    def headers(self) -> list[str]:
        return [text for n in range(self.chats.rowCount()) if (text := self._header_text(n))]

    def _header_text(self, row: int) -> str:
        index = self.chats.index(row)
        return str(index.data()) if index.data(HEADER_ROLE) else ""

    def texts(self) -> list[str]:
        """What each row shows, headers in brackets: the list as a person reads it."""
        return [
            f"[{index.data()}]" if index.data(HEADER_ROLE) else str(index.data())
            for index in (self.chats.index(n) for n in range(self.chats.rowCount()))
        ]

    def index_of(self, session_id: str) -> QModelIndex:
        """The chat's index; invalid when it is not listed or folded in the archive."""
        row = self.chats.row_of(session_id)
        return self.chats.index(row) if row is not None and row < self.chats.rowCount() else QModelIndex()

    def title_of(self, session_id: str) -> str:
        """The chat's title as the list has it ("" when untitled or not listed)."""
        row = self.chats.row_of(session_id)
        record = self.chats.rows[row].record if row is not None else None
        return record.title if record is not None else ""


class HeaderDelegate(QStyledItemDelegate):
    """Paints a header as a small muted label at the foot of its row (the Archived one with its
    caret); chats as the style sheet says."""

    def __init__(self, view: ChatList) -> None:
        super().__init__(view)
        self.view = view

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        size = super().sizeHint(option, index)
        if index.data(SNIPPET_ROLE) is not None:  # every result, so rows stay one height
            size.setHeight(size.height() + QFontMetrics(snippet_font(option.font)).height() + SPACE["xs"])
        return size

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        key: GroupKey | None = index.data(HEADER_ROLE)
        if key is None:
            super().paint(painter, option, index)
            found: Snippet | None = index.data(SNIPPET_ROLE)
            if found:
                self._paint_snippet(painter, option, found)
            return
        tokens = tokens_of(self.view)
        rect: QRect = option.rect
        painter.save()
        painter.setFont(_header_font(option.font))
        painter.setPen(QColor(tokens.muted))
        left = rect.left() + SPACE["s"]
        if key == "archived":
            caret = "caret-down" if self.view.archive_open else "caret-right"
            side = QFontMetrics(painter.font()).height()
            icon(caret, tokens.muted).paint(painter, QRect(left, rect.bottom() - side - 2, side, side))
            left += side + SPACE["xs"]
        text_rect = QRect(left, rect.top(), rect.right() - left - SPACE["s"], rect.height() - 2)
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom, str(index.data()))
        painter.restore()

    def _paint_snippet(self, painter: QPainter, option: QStyleOptionViewItem, found: Snippet) -> None:
        rect: QRect = option.rect
        font = snippet_font(option.font)
        height = QFontMetrics(font).height()
        inset = SPACE["s"]  # the style sheet's padding of a row
        line = QRect(rect.left() + inset, rect.bottom() - height - SPACE["xs"], rect.width() - 2 * inset, height)
        paint_snippet(painter, line, found, tokens_of(self.view), option.font)


def _header_font(base: QFont) -> QFont:
    font = QFont(base)
    font.setPointSizeF(max(base.pointSizeF() - 1, 7))
    font.setWeight(QFont.Weight.DemiBold)
    return font
