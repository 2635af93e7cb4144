"""The session sidebar: search, new, the grouped chat list, rename, pin, archive, delete with undo, export."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QMenu, QPushButton, QVBoxLayout, QWidget

from desktop.app import SessionRecord, Snippet
from ui.window.chat_list import ARCHIVED_ROLE, HEADER_ROLE, ID_ROLE, PINNED_ROLE, TITLE_ROLE, ChatList

__all__ = ["TITLE_ROLE", "Sidebar"]

UNDO_SECONDS = 10


class Sidebar(QWidget):
    """Shows sessions; asks the window to act on them through its signals."""

    selected = Signal(str)
    new_requested = Signal()
    search_changed = Signal(str)
    further_requested = Signal()
    rename_requested = Signal(str, str)
    delete_requested = Signal(str)
    undo_requested = Signal(str)
    export_requested = Signal(str, str)  # session id, "md" or "json"
    pin_requested = Signal(str, bool)  # session id, pinned
    archive_requested = Signal(str, bool)  # session id, archived

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search chats (Ctrl+K)")
        self.search.setAccessibleName("Search chats")
        self.search.setClearButtonEnabled(True)
        self._debounce = QTimer(self, singleShot=True, interval=200)
        self._debounce.timeout.connect(lambda: self.search_changed.emit(self.search.text()))
        self.search.textChanged.connect(lambda _t: self._debounce.start())

        self.new_button = QPushButton("New chat")
        self.new_button.setAccessibleName("New chat")
        self.new_button.clicked.connect(self.new_requested)

        self.list = ChatList()
        self.list.setAccessibleName("Chats")
        # A long title ends in "…" within the list's width (its tooltip has it whole).
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.selectionModel().currentChanged.connect(self._current_changed)
        self.list.chats.renamed.connect(self._renamed)

        # Under a search's results when there may be more: what the page was, and a button
        # that goes on from where it stopped.
        self.search_note = QLabel()
        self.search_note.setWordWrap(True)
        self.search_note.setObjectName("searchNote")
        self.further_button = QPushButton("Search further")
        self.further_button.setAccessibleName("Search further")
        self.further_button.clicked.connect(self.further_requested)
        self.show_search_more(None)

        self.undo_bar = QFrame()
        self.undo_bar.setFrameShape(QFrame.Shape.StyledPanel)
        self.undo_label = QLabel()
        self.undo_label.setWordWrap(True)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setAccessibleName("Undo delete")
        self.undo_button.clicked.connect(self._undo)
        bar = QHBoxLayout(self.undo_bar)
        bar.addWidget(self.undo_label, 1)
        bar.addWidget(self.undo_button)
        self.undo_bar.hide()
        self._undo_timer = QTimer(self, singleShot=True, interval=UNDO_SECONDS * 1000)
        self._undo_timer.timeout.connect(self.undo_bar.hide)
        self._deleted: str | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 0, 8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.search_note)
        layout.addWidget(self.further_button)
        layout.addWidget(self.undo_bar)
        self._filling = False

    def show_sessions(self, found: list[tuple[SessionRecord, Snippet]], current: str | None) -> None:
        """The chats, grouped (Pinned, by day, Archived); search results flat, as found."""
        self._filling = True
        self.list.fill(found, current, grouped=not self.search.text().strip())
        self._filling = False

    def show_search_more(self, note: str | None) -> None:
        """Say there may be more results, and offer to search further; ``None`` hides both."""
        self.search_note.setText(note or "")
        self.search_note.setVisible(note is not None)
        self.further_button.setVisible(note is not None)

    def current_id(self) -> str | None:
        return self.list.current_id()

    def select_none(self) -> None:
        """No chat is current (a new one is on screen), so choosing any chat opens it."""
        self._filling = True
        self.list.setCurrentIndex(QModelIndex())
        self._filling = False

    def title_of(self, session_id: str) -> str:
        """The chat's title as the list has it ("" when untitled or not listed)."""
        return self.list.title_of(session_id)

    def show_undo(self, session_id: str, title: str) -> None:
        self._deleted = session_id
        self.undo_label.setText(f"Deleted “{title or 'Untitled chat'}”.")
        self.undo_bar.show()
        self._undo_timer.start()

    def _undo(self) -> None:
        if self._deleted is not None:
            self.undo_requested.emit(self._deleted)
        self._deleted = None
        self.undo_bar.hide()

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        session_id = current.data(ID_ROLE)
        if session_id and not self._filling:  # a header opens nothing
            self.selected.emit(session_id)

    def _renamed(self, session_id: str, title: str) -> None:
        if not self._filling:
            self.rename_requested.emit(session_id, title)

    def chat_menu(self, index: QModelIndex) -> QMenu | None:
        """The menu of the chat at ``index`` (``None`` for a header)."""
        session_id = index.data(ID_ROLE)
        if not session_id or index.data(HEADER_ROLE):
            return None
        pinned, archived = bool(index.data(PINNED_ROLE)), bool(index.data(ARCHIVED_ROLE))
        menu = QMenu(self)
        menu.addAction("Rename", lambda: self._rename(session_id))
        if not archived:
            menu.addAction("Unpin" if pinned else "Pin", lambda: self.pin_requested.emit(session_id, not pinned))
        menu.addAction(
            "Unarchive" if archived else "Archive", lambda: self.archive_requested.emit(session_id, not archived)
        )
        menu.addSeparator()
        menu.addAction("Export as Markdown…", lambda: self.export_requested.emit(session_id, "md"))
        menu.addAction("Export as JSON…", lambda: self.export_requested.emit(session_id, "json"))
        menu.addSeparator()
        menu.addAction("Delete", lambda: self.delete_requested.emit(session_id))
        return menu

    def _rename(self, session_id: str) -> None:
        index = self.list.index_of(session_id)  # found again: the list may have been filled since the menu opened
        if index.isValid():
            self.list.edit(index)

    def _menu(self, position: QPoint) -> None:
        index = self.list.indexAt(position)
        menu = self.chat_menu(index) if index.isValid() else None
        if menu is not None:
            menu.exec(self.list.viewport().mapToGlobal(position))
