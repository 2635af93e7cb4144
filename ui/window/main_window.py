"""Cairn's main window: the sidebar, the chat, the composer, the status bar and the inspector.

The window shows state and forwards intent. Every journal read, every request and every
settings write happens on the core thread; results come back as queued callbacks.
"""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.app import (
    Account,
    AppSnapshot,
    CairnApp,
    ChatRouteView,
    OpenedChat,
    RequestUsage,
    SessionRecord,
    UsageTotals,
)
from host.content import Mode
from ui.bridge.core_thread import CoreThread
from ui.chat_panel.approval_cards import ApprovalCards
from ui.chat_panel.chat_controller import ChatController
from ui.chat_panel.chat_settings_dialog import ChatSettingsActions
from ui.chat_panel.composer import Composer
from ui.chat_panel.route_bar import RouteBar
from ui.chat_panel.route_controller import ChatRoutes
from ui.chat_panel.status_line import StatusLine
from ui.chat_panel.welcome import Welcome, show_welcome_when_empty
from ui.message_list.chat_view import ChatView
from ui.message_list.display_message import DisplayMessage
from ui.message_list.search_marks import search_changed, show_search_match
from ui.settings_dialog.dialog import SettingsDialog
from ui.widgets.banners import EditBanner, notice_label
from ui.widgets.theme import TEXT_SIZES
from ui.window.about import show_about
from ui.window.context_inspector import Inspector
from ui.window.export_name import export_folder, file_name
from ui.window.help_dialogs import add_help_actions
from ui.window.narrow import NarrowLayout
from ui.window.sidebar import Sidebar
from ui.window.start_page import StartPage
from ui.window.window_state import fit_to_screen

__all__ = ["MainWindow"]

log = logging.getLogger(__name__)
PAGE = 200
COMPACT_PROMPT = (
    "Cairn will summarise the earlier messages of this chat to free its context; they stay\n"
    "on screen above the summary. What should the summary keep especially? (optional)"
)
ShownUsage = tuple[UsageTotals, RequestUsage | None]
Versions = dict[str, tuple[str, ...]]  # a message on screen -> its versions


class MainWindow(QMainWindow):
    """One window onto the app; several may share one core."""

    theme_requested = Signal(str)
    text_size_requested = Signal(int)  # points; 0: Cairn's default
    new_window_requested = Signal()
    quit_requested = Signal()  # every window closes, and Cairn with them
    closed = Signal()

    def __init__(self, core: CoreThread, app: CairnApp, snapshot: AppSnapshot) -> None:
        super().__init__()
        self.core, self.app = core, app
        self.snapshot = snapshot  # what the core last published; the only core state read here
        self.pending_mode: Mode | None = None  # chosen before the chat's first message
        self.session_id: str | None = None
        self.settings_dialog: QDialog | None = None
        self.setWindowTitle("Cairn")
        self.resize(1100, 760)
        self._build()
        self.controller = ChatController(self)
        self.routes = ChatRoutes(self)
        self.approvals = ApprovalCards(self)
        self._older: object | None = None  # the fetch of older messages under way
        self._oldest_shown: tuple[str, int] | None = None  # a chat and its first message, before which is nothing
        self._listing = 0  # the newest chat list asked of the core; older answers are dropped
        self._select: str | None = None  # a chat to open once the newest list has it
        self.narrow = NarrowLayout(self, self.splitter, self.sidebar, self.route_bar.chats_button)
        self._actions()
        self._connect()

    def _build(self) -> None:

        self.sidebar = Sidebar()
        self.chat = ChatView()
        self.composer = Composer()
        self.notice = notice_label("Notice", "color: #c62828; padding: 4px 10px;")
        self.edit_banner = EditBanner()
        self.cancel_edit = self.edit_banner.cancel
        self.read_only_banner = notice_label(
            "Read-only journal", "background: #fff4e5; color: #7a4b00; padding: 6px 10px;"
        )
        self.route_bar = RouteBar()
        self.accounts, self.models = self.route_bar.accounts, self.route_bar.models

        chat_panel = QWidget()
        column = QVBoxLayout(chat_panel)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.route_bar)
        self.welcome = Welcome()
        chat_stack = QStackedWidget()
        chat_stack.addWidget(self.chat)
        chat_stack.addWidget(self.welcome)
        show_welcome_when_empty(self.chat.model(), chat_stack, self.chat, self.welcome)
        column.addWidget(chat_stack, 1)
        column.addWidget(self.notice)
        column.addWidget(self.edit_banner)
        column.addWidget(self.composer)
        self.start_page = StartPage()
        self.pages = QStackedWidget()
        self.pages.addWidget(chat_panel)
        self.pages.addWidget(self.start_page)

        splitter = QSplitter()
        splitter.addWidget(self.sidebar)
        right = QWidget()
        right_column = QVBoxLayout(right)
        right_column.setContentsMargins(0, 0, 0, 0)
        right_column.setSpacing(0)
        right_column.addWidget(self.read_only_banner)  # above both pages: a read-only journal shows on each
        right_column.addWidget(self.pages, 1)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([260, 840])
        self.setCentralWidget(splitter)
        self.splitter = splitter

        self.inspector = Inspector(self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inspector)
        self.inspector.hide()

        self._build_status_bar()

    def _build_status_bar(self) -> None:
        self.status_line = StatusLine(self.statusBar())
        self.route_label, self.usage_label, self.context_label = self.status_line.labels

    def _cancel_edit(self) -> None:
        self.controller.end_edit()

    # -- wiring --------------------------------------------------------------------------

    def _actions(self) -> None:
        def add(text: str, shortcut: str, slot: Any) -> QAction:
            action = QAction(text, self)
            action.setShortcut(QKeySequence(shortcut))
            action.triggered.connect(slot)
            self.addAction(action)
            return action

        self.new_action = add("New chat", "Ctrl+N", self.new_session)
        self.search_action = add("Search chats", "Ctrl+K", self._focus_search)
        self.settings_action = add("Settings…", "Ctrl+,", partial(self.open_settings, None))
        self.copy_action = add("Copy last answer", "Ctrl+Shift+C", self.controller.copy_last_answer)
        self.inspector_action = add("Context inspector", "Ctrl+I", self.toggle_inspector)
        self.window_action = add("New window", "Ctrl+Shift+N", self.new_window_requested)
        self.compact_action = add("Compact chat…", "Ctrl+Shift+K", self.compact_chat)
        self.quit_action = add("Quit Cairn", "Ctrl+Q", self.quit_requested)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        menu = self.menuBar().addMenu("&Cairn")
        for action in (self.new_action, self.window_action, self.search_action, self.settings_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.quit_action)
        chat = self.menuBar().addMenu("C&hat")
        chat.addAction(self.compact_action)
        self.chat_settings = ChatSettingsActions(self, chat)  # Chat settings…, New chat from assistant
        view = self.menuBar().addMenu("&View")
        view.addAction(self.inspector_action)
        view.addAction(self.copy_action)
        view.addSeparator()
        self.zoom_actions: dict[int, QAction] = {}
        for text, keys, step in (
            ("Larger text", ("Ctrl++", "Ctrl+="), 1),
            ("Smaller text", ("Ctrl+-",), -1),
            ("Actual size", ("Ctrl+0",), 0),
        ):
            zoom = QAction(text, self)
            zoom.setShortcuts([QKeySequence(k) for k in keys])
            zoom.triggered.connect(lambda _checked=False, s=step: self.zoom(s))
            self.addAction(zoom)
            view.addAction(zoom)
            self.zoom_actions[step] = zoom
        help_menu = self.menuBar().addMenu("&Help")
        self.shortcuts_action, self.data_action = add_help_actions(self, help_menu, self.app.paths)
        help_menu.addSeparator()
        self.about_action = help_menu.addAction("About Cairn")
        self.about_action.triggered.connect(lambda: show_about(self, self.app.paths))

    def _connect(self) -> None:
        self.core.reported.connect(self.controller.on_core_event)
        self.core.reported.connect(self.approvals.on_core_event)
        self.composer.approve.connect(self.controller.approve_pending)
        self.core.reported.connect(self.inspector.on_event)
        self.sidebar.selected.connect(self.open_session)
        self.sidebar.selected.connect(lambda _id: self.narrow.fold())
        self.sidebar.search_changed.connect(partial(search_changed, self.chat))
        self.sidebar.new_requested.connect(self.new_session)
        self.sidebar.search_changed.connect(self.refresh_sessions)
        self.sidebar.rename_requested.connect(self.rename_session)
        self.sidebar.delete_requested.connect(self.delete_session)
        self.sidebar.undo_requested.connect(self.restore_session)
        self.sidebar.export_requested.connect(self.export_session)
        self.sidebar.pin_requested.connect(partial(self.mark_session, "pin"))
        self.sidebar.archive_requested.connect(partial(self.mark_session, "archive"))
        self.composer.send.connect(self.controller.send)
        self.composer.stop.connect(self.controller.stop)
        self.cancel_edit.clicked.connect(self._cancel_edit)
        self.chat.message_delegate.action.connect(self.controller.on_message_action)
        self.chat.wants_older.connect(self.load_older)
        self.route_bar.mode_chosen.connect(self._mode_chosen)
        self.start_page.add_account.connect(self.open_settings)
        self.start_page.use_local.connect(self._use_local)
        self.welcome.chosen.connect(self._example_chosen)

    def _example_chosen(self, prompt: str) -> None:
        self.composer.set_text(prompt)
        self.composer.editor.setFocus()

    def run_on_core(self, work: Any, on_done: Any = None, on_error: Any = None) -> None:
        self.core.submit(work, on_done, on_error or self.show_error)

    def show_error(self, error: BaseException) -> None:
        log.error("%s: %s", type(error).__name__, error)
        self.show_notice(str(error))

    def show_notice(self, text: str) -> None:
        self.notice.setText(text)
        self.notice.show()

    def clear_notice(self) -> None:
        self.notice.hide()

    def focus_composer(self) -> None:
        """Back to writing, after a dialog or a card took the focus."""
        if self.composer.isEnabled():
            self.composer.editor.setFocus()

    # -- start-up ------------------------------------------------------------------------

    def start(self, last_session: str | None) -> None:
        """Fill the window from the core: accounts, sessions, and the last chat."""
        self.refresh_routes()
        self._show_read_only()
        self.refresh_sessions(select=last_session)

    def apply_snapshot(self, snapshot: AppSnapshot) -> None:
        """Render what the core published: accounts, the route, settings."""
        self.snapshot = snapshot
        self.refresh_routes()
        self._show_read_only()
        if self.session_id is not None:  # the chat's account may be gone, its route's context changed
            self.routes.reload(self.session_id)
        dialog = self.settings_dialog
        if isinstance(dialog, SettingsDialog) and dialog.isVisible():
            dialog.permissions.show_snapshot(snapshot)

    def _show_read_only(self) -> None:
        """A journal a newer Cairn wrote: everything stays readable, nothing can be written."""
        reason = self.snapshot.read_only
        self.read_only_banner.setVisible(reason is not None)
        self.read_only_banner.setText(reason or "")
        for widget in (self.composer, self.sidebar.new_button):
            widget.setEnabled(reason is None)

    def refresh_routes(self) -> None:
        self.routes.refresh()

    @property
    def chat_route(self) -> ChatRouteView | None:
        return self.routes.view

    def _mode_chosen(self, mode: Mode) -> None:
        """The chat's permission mode, from its next tool call on; a chat not begun yet
        starts in it."""
        session_id = self.session_id
        if session_id is None:
            self.pending_mode = mode
            return
        self.run_on_core(lambda: self.app.options.set_mode(session_id, mode))

    def _use_local(self, preset: str, base_url: str, model: str) -> None:
        known = self.snapshot.transport.preset(preset)
        override = None if known is not None and known.base_url == base_url else base_url
        name = known.name if known is not None else preset
        account = Account(name=name, provider=preset, base_url=override, default_model=model)
        self.run_on_core(lambda: self.app.accounts.save(account, None))

    # -- sessions ------------------------------------------------------------------------

    def refresh_sessions(self, query: str | None = None, select: str | None = None) -> None:
        """Ask the core for the chat list, or a search's results. Only the newest request's
        answer is shown: one still queued when a newer request comes is not run, one that
        arrives after it (a query typed over) is dropped, and a chat it was to select is
        selected by the newer one. A search is short (``host.journal_search`` bounds its work), so it
        is left to finish rather than interrupted."""
        text = self.sidebar.search.text() if query is None else query
        self._listing += 1
        asked = self._listing
        self._select = select or self._select

        def listed() -> list[tuple[SessionRecord, str]] | None:
            # Still queued on the core when a newer request came: skip the work altogether.
            return None if asked != self._listing else self.app.chats.search(text)

        def shown(found: list[tuple[SessionRecord, str]] | None) -> None:
            if found is None or asked != self._listing:
                return
            chosen, self._select = self._select, None
            self.sidebar.show_sessions(found, chosen or self.session_id)
            if chosen and any(record.id == chosen for record, _ in found) and chosen != self.session_id:
                self.open_session(chosen)

        self.run_on_core(listed, shown)

    def new_session(self) -> None:
        def created(record: SessionRecord) -> None:
            self.sidebar.search.clear()
            self.refresh_sessions(query="", select=record.id)
            self.composer.editor.setFocus()

        self.run_on_core(self.app.chats.new, created)

    def compact_chat(self) -> None:
        """Summarise the chat's earlier messages now, with an optional focus for the summary."""
        session_id = self.session_id
        if session_id is None or self.pages.currentWidget() is self.start_page:
            self.statusBar().showMessage("Open a chat to compact it.", 5000)
            return
        if session_id in self.controller.busy:
            self.statusBar().showMessage("The chat is answering; compact it when the reply is done.", 5000)
            return
        focus, ok = self.ask_compaction_focus()
        self.focus_composer()
        if ok:
            self.clear_notice()
            self.controller.compact(session_id, focus.strip() or None)

    def ask_compaction_focus(self) -> tuple[str, bool]:
        """The focus note for Compact chat, and whether the person went ahead."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Compact chat")
        dialog.setLabelText(COMPACT_PROMPT)
        dialog.setOkButtonText("Compact")
        dialog.setAccessibleName("Compact chat")
        ok = dialog.exec() == QInputDialog.DialogCode.Accepted
        return dialog.textValue(), ok

    def open_session(self, session_id: str) -> None:
        if session_id == self.session_id:
            return
        self.controller.end_edit(keep_text=True)  # the edit ends with the chat; what was typed stays
        self.session_id = session_id
        self._older = None
        self.clear_notice()
        self.controller.end_retrying()
        self.routes.view = None  # the chat's own route arrives with its rows; the last one is not its
        self.inspector.show_session(session_id)

        def loaded(opened: OpenedChat) -> None:
            if self.session_id != session_id:
                return
            self.routes.show(session_id, opened.route)
            if opened.busy:  # answering in another window
                self.controller.busy.add(session_id)
            self.route_bar.show_mode(opened.mode)
            self.controller.show_session(session_id, list(opened.page.rows), opened.versions)
            show_search_match(self.chat, self.sidebar.search.text())
            self.controller.show_usage(opened.usage)
            self.controller.show_fill(opened.fill)
            self.approvals.show_parked(session_id, opened.parked)
            log.info("session opened (%d rows shown)", len(opened.page.rows))

        self.run_on_core(lambda: self.app.chats.open(session_id, limit=PAGE), loaded)

    def load_older(self) -> None:
        """Put the page of messages before the first shown in front of it: read on the core
        thread, measured between frames, then laid out once with their real sizes, so that
        scrolling into them lays nothing out again."""
        model = self.chat.model_rows()
        first = next((m.seq for m in model.messages if m.seq is not None), None)
        if self._older is not None or first is None or self.session_id is None:
            return
        if self._oldest_shown == (self.session_id, first):
            return
        session_id = self.session_id
        self._older = token = object()  # this fetch; opening another chat forgets it

        def older() -> tuple[list[DisplayMessage], bool]:  # on the core thread: reading rows is not the GUI's work
            page = self.app.chats.page(session_id, before_seq=first, limit=PAGE)
            messages = [m for m in (DisplayMessage.from_row(r) for r in page.rows) if m is not None]
            return messages, page.first

        def fetched(result: tuple[list[DisplayMessage], bool]) -> None:
            messages, oldest = result
            if self._older is not token:
                return
            if oldest:
                first_now = messages[0].seq if messages and messages[0].seq is not None else first
                self._oldest_shown = (session_id, first_now)
            if not messages:
                self._older = None
                return
            self.controller.versions.mark(messages)
            # The messages that come into view first are measured first.
            self.chat.message_delegate.later.measure(
                messages[::-1], lambda completed, _changed: measured(messages, completed)
            )

        def measured(messages: list[DisplayMessage], completed: bool) -> None:
            if self._older is not token:
                return
            self._older = None
            still = next((m.seq for m in model.messages if m.seq is not None), None)
            if not completed or self.session_id != session_id or still != first:
                return  # the chat was shown afresh meanwhile (a version switched): fetched again when needed
            bar = self.chat.verticalScrollBar()
            from_bottom = bar.maximum() - bar.value()
            model.prepend(messages)
            self.chat.doItemsLayout()
            self.chat.message_delegate.laid_out()
            bar.setValue(bar.maximum() - from_bottom)

        self.run_on_core(older, fetched)

    def rename_session(self, session_id: str, title: str) -> None:
        def renamed(_result: object) -> None:
            self.refresh_sessions()
            self.focus_composer()

        self.run_on_core(lambda: self.app.chats.rename(session_id, title), renamed)

    def delete_session(self, session_id: str) -> None:
        title = self.sidebar.title_of(session_id)

        def deleted(_result: object) -> None:
            self.sidebar.show_undo(session_id, title)
            if self.session_id == session_id:
                self.controller.end_edit()
                self.session_id = None
                self.chat.model_rows().reset([])
                self.controller.reset_status()
                self.routes.forget()
            self.refresh_sessions()

        self.run_on_core(lambda: self.app.chats.delete(session_id), deleted)

    def restore_session(self, session_id: str) -> None:
        self.run_on_core(
            lambda: self.app.chats.restore(session_id), lambda _r: self.refresh_sessions(select=session_id)
        )

    def mark_session(self, mark: str, session_id: str, on: bool) -> None:
        """Pin (``mark`` "pin") or archive the chat, or undo that (``on`` false)."""
        mark_it = self.app.chats.pin if mark == "pin" else self.app.chats.archive
        self.run_on_core(lambda: mark_it(session_id, on), lambda _r: self.refresh_sessions())

    def export_session(self, session_id: str, kind: str) -> None:
        suffix = "Markdown (*.md)" if kind == "md" else "JSON (*.json)"
        title = self.sidebar.title_of(session_id)
        suggested = str(export_folder() / f"{file_name(title)}.{kind}")
        path, _ = QFileDialog.getSaveFileName(self, "Export chat", suggested, suffix)
        self.focus_composer()
        if path:
            self.run_on_core(lambda: self.app.chats.export(session_id, Path(path)))

    # -- window --------------------------------------------------------------------------

    def open_settings(self, preset: str | None = None) -> None:
        """The Settings dialog, on a new account of ``preset`` when one is given."""

        def show(_reloaded: object) -> None:
            dialog = SettingsDialog(self, preset=preset)
            dialog.finished.connect(self.focus_composer)
            dialog.open()
            self.settings_dialog = dialog

        # Opened on settings read afresh: the command line may have changed them meanwhile.
        self.run_on_core(self.app.preferences.reload, show)

    def zoom(self, step: int) -> None:
        """Text one point larger (1) or smaller (-1), or back to the default (0)."""
        size = QApplication.font().pointSize() + step if step else 0
        if step == 0 or TEXT_SIZES[0] <= size <= TEXT_SIZES[-1]:
            self.text_size_requested.emit(size)

    def set_theme(self, theme: str) -> None:
        self.theme_requested.emit(theme)

    def _focus_search(self) -> None:
        self.narrow.reveal()
        self.sidebar.search.setFocus()
        self.sidebar.search.selectAll()

    def toggle_inspector(self) -> None:
        self.inspector.setVisible(not self.inspector.isVisible())

    def restore_geometry(self, encoded: str) -> None:
        """The saved geometry, fitted to the screen it opens on: one saved on a bigger screen,
        at another scale or on a screen gone since never opens larger than the screen or off it."""
        if encoded and self.restoreGeometry(QByteArray.fromBase64(encoded.encode("ascii"))):
            fit_to_screen(self)

    def encoded_geometry(self) -> str:
        return bytes(self.saveGeometry().toBase64().data()).decode("ascii")

    def closeEvent(self, event: QCloseEvent) -> None:
        self.controller.stop_all()
        self.closed.emit()
        super().closeEvent(event)
