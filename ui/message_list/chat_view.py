"""The chat view: a list model of the messages of the chat on screen, painted by
``MessageDelegate``. It tracks which message the pointer is over (its buttons show), offers a
message's actions in a context menu for the keyboard, and asks for older messages at the top.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QMouseEvent
from PySide6.QtWidgets import QAbstractItemView, QListView, QMenu, QWidget

from ui.message_list.display_message import DisplayMessage, message_actions
from ui.message_list.message_delegate import MessageDelegate
from ui.message_list.message_model import MESSAGE_ROLE, MessageModel
from ui.message_list.search_marks import first_match, search_words

__all__ = ["ChatView"]

NEAR_TOP = 40  # rows above the view's top under which older messages are fetched
MEASURED_TOGETHER = 12  # rows measured ahead between two layouts


class ChatView(QListView):
    """The list of messages; asks for older ones when scrolled to the top."""

    wants_older = Signal()
    wants_newer = Signal()  # scrolled near the last row while the newest are released
    wants_newest = Signal()  # to the chat's end, whose newest rows are released

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Conversation")
        self.setAccessibleName("Conversation")
        self.setModel(MessageModel(self))
        self.message_delegate = MessageDelegate(self, self.model_rows())
        self.message_delegate.resized.connect(self._rows_resized)
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
        """Whether the chat's newest message is in view."""
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 4 and not self.model_rows().newest_released

    def _scrolled(self, _value: int) -> None:
        self._follow = self.at_bottom()
        self.check_edges()
        self._hover(self.viewport().mapFromGlobal(self.cursor().pos()))

    def check_edges(self) -> None:
        """Ask for the page before the first row, or after the last, when the view is near it:
        early, so the page is read and measured before it is needed."""
        model = self.model_rows()
        if not model.messages:
            return
        if self.verticalScrollBar().value() == 0 or self.top_row() < NEAR_TOP:
            self.wants_older.emit()
        if model.newest_released and self.bottom_row() >= len(model.messages) - NEAR_TOP:
            self.wants_newer.emit()

    def top_row(self) -> int:
        """The row at the top of the view (-1 for none)."""
        return self._top_index().row()

    def bottom_row(self) -> int:
        """The row at the bottom of the view (the last, when the rows end above it)."""
        row = self.indexAt(QPoint(self.viewport().width() // 2, self.viewport().height() - 1)).row()
        return row if row >= 0 else len(self.model_rows().messages) - 1

    def _top_index(self) -> QModelIndex:
        return self.indexAt(QPoint(self.viewport().width() // 2, 0))

    def anchor(self) -> tuple[str, int] | None:
        """The message at the top of the view and where its top is: ``keep_anchor`` puts it
        back there after rows come and go around it."""
        top = self._top_index()
        return (top.data(MESSAGE_ROLE).key, self.visualRect(top).top()) if top.isValid() else None

    def keep_anchor(self, anchor: tuple[str, int] | None) -> None:
        """Lay the rows out again with ``anchor``'s message where it was."""
        self.doItemsLayout()
        row = self.model_rows().row_of(anchor[0]) if anchor is not None else None
        if anchor is None or row is None:
            return
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + self.visualRect(self.model().index(row, 0)).top() - anchor[1])
        self._follow = self.at_bottom()  # the chat's end may have left the view

    def relayout(self) -> None:
        """Lay out every row again, keeping what the person looks at in place: the newest
        message while following the chat, else the message at the top of the view."""
        if self._follow:
            self.doItemsLayout()
            self.scrollToBottom()
            return
        top = self._top_index()
        before = self.visualRect(top).top() if top.isValid() else 0
        self.doItemsLayout()
        if top.isValid():
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + self.visualRect(top).top() - before)

    def _rows_resized(self) -> None:
        if self.model_rows().messages:
            self.relayout()

    def measure_ahead(self) -> None:
        """Measure, between frames, the rows laid out at an estimate (the newest first), a few at
        a time, each few laid out once measured, before the person scrolls to them."""
        delegate = self.message_delegate
        waiting = [m for m in reversed(self.model_rows().messages) if delegate.estimated(m)]
        for start in range(0, len(waiting), MEASURED_TOGETHER):
            delegate.later.measure(
                waiting[start : start + MEASURED_TOGETHER],
                lambda completed, changed: self.relayout() if completed and changed else None,
            )

    def follow(self) -> None:
        """Keep the newest message in view, unless the person scrolled away."""
        if self._follow and not self.model_rows().newest_released:
            self.scrollToBottom()

    def jump_to_bottom(self) -> None:
        """To the chat's newest message (read back first when it was released)."""
        self._follow = True
        if self.model_rows().newest_released:
            self.wants_newest.emit()
            return
        self.scrollToBottom()

    def show_row(self, row: int) -> None:
        """Bring ``row`` to the middle of the view, and stop following the chat's end."""
        self._follow = False
        self.scrollTo(self.model().index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
        self._follow = self.at_bottom()

    # -- a search's match -----------------------------------------------------------------

    def show_search_match(self, query: str, focus: str | None = None) -> None:
        """A chat opened while searching: its words are marked, and the message that matched
        (``focus``, the one whose snippet the result showed; else the first that matches) is
        scrolled to the top of the view."""
        words = search_words(query)
        self.message_delegate.highlight = words
        model = self.model_rows()
        row = model.row_of(focus) if focus is not None and words else None
        if row is None:
            row = first_match(model.messages, words)
        if row is not None:
            self.doItemsLayout()
            self.scrollTo(self.model().index(row, 0), QAbstractItemView.ScrollHint.PositionAtTop)
        self.viewport().update()

    def search_changed(self, query: str) -> None:
        """The search was cleared: no more marks."""
        if not query.strip() and self.message_delegate.highlight:
            self.message_delegate.highlight = ()
            self.viewport().update()

    # -- the pointer and the keyboard ----------------------------------------------------

    def _hover(self, pos: QPoint | None) -> None:
        """Show the buttons of the message under ``pos`` (``None``: of no message)."""
        index = self.indexAt(pos) if pos is not None and self.viewport().rect().contains(pos) else QModelIndex()
        key = index.data(MESSAGE_ROLE).key if index.isValid() else None
        delegate = self.message_delegate
        if key != delegate.hovered:
            for old in (delegate.hovered, key):
                row = self.model_rows().row_of(old) if old is not None else None
                if row is not None:
                    self.update(self.model().index(row, 0))
            delegate.hovered = key

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        self._hover(event.position().toPoint())
        super().mouseMoveEvent(event)

    def leaveEvent(self, event: Any) -> None:
        self._hover(None)
        super().leaveEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        """The message's buttons as a menu: right-click, or the Menu key on the current one."""
        index = self.indexAt(event.pos()) if event.reason() == QContextMenuEvent.Reason.Mouse else self.currentIndex()
        if not index.isValid() and self.model_rows().messages:
            index = self.model().index(len(self.model_rows().messages) - 1, 0)
        if not index.isValid():
            return
        message: DisplayMessage = index.data(MESSAGE_ROLE)
        last_user, last_answer = self.message_delegate.flags(message)
        actions = message_actions(message, last_user=last_user, last_answer=last_answer)
        if not actions:
            return
        menu = QMenu(self)
        menu.setAccessibleName("Message actions")
        for action in actions:
            menu.addAction(action.tip, partial(self.message_delegate.action.emit, message.key, action.name))
        menu.exec(event.globalPos())
