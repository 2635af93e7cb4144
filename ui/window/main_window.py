"""Cairn's main window: the sidebar, the chat, the composer, the status bar and the inspector.

The window builds its parts and wires them; each controller gets the widgets it drives and
the core client, never the window. Every journal read, every request and every settings
write happens on the core thread; results come back as queued callbacks.
"""

from __future__ import annotations

from functools import partial

from PySide6.QtCore import QByteArray, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QInputDialog,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.app import Account, AppSnapshot, CairnApp, CairnPaths, ChatRouteView
from host.content import Mode
from ui.bridge.core_client import CoreClient
from ui.bridge.core_thread import CoreThread
from ui.chat_panel.chat_settings_dialog import ChatSettingsActions
from ui.chat_panel.panel import ChatPanel
from ui.settings_dialog.dialog import SettingsDialog
from ui.widgets.banners import notice_label
from ui.widgets.theme import TEXT_SIZES
from ui.window.about import show_about
from ui.window.chat_list_actions import ChatListActions
from ui.window.context_inspector import INSPECTOR_WIDTH, Inspector
from ui.window.help_dialogs import add_help_actions
from ui.window.narrow import SIDEBAR_WIDTH, NarrowLayout
from ui.window.secrets_notice import SecretsNotice
from ui.window.sidebar import Sidebar
from ui.window.start_page import StartPage
from ui.window.window_state import fit_to_screen

__all__ = ["COMPACT_PROMPT", "MainWindow"]

COMPACT_PROMPT = (
    "Cairn will summarise the earlier messages of this chat to free its context; they stay\n"
    "on screen above the summary. What should the summary keep especially? (optional)"
)


class MainWindow(QMainWindow):
    """One window onto the app; several may share one core. ``core`` is the core's thread
    (its events reach the window's parts through it), ``client`` what they call it with."""

    theme_requested = Signal(str)
    text_size_requested = Signal(int)  # points; 0: Cairn's default
    new_window_requested = Signal()
    quit_requested = Signal()  # every window closes, and Cairn with them
    closed = Signal()

    def __init__(self, core: CoreThread, client: CoreClient, paths: CairnPaths) -> None:
        super().__init__()
        self.core, self.paths = core, paths
        self.client = client.with_errors(self.show_error)  # an error nobody else handles shows here
        self.settings_dialog: QDialog | None = None
        self.setWindowTitle("Cairn")
        self.resize(1100, 760)
        self._build()
        self.sessions = ChatListActions(
            self.client, self.sidebar, self.shown, self.panel.opener, self.composer, parent=self
        )
        self.narrow = NarrowLayout(self, self.splitter, self.sidebar, self.route_bar.chats_button)
        self._actions()
        self._connect()

    def _build(self) -> None:
        self.sidebar = Sidebar()
        self.panel = panel = ChatPanel(self.client, self, search=self.sidebar.search)
        self.chat, self.composer, self.notice, self.welcome = panel.chat, panel.composer, panel.notice, panel.welcome
        self.edit_banner, self.cancel_edit, self.route_bar = (
            panel.edit_banner,
            panel.edit_banner.cancel,
            panel.route_bar,
        )
        self.accounts, self.models = self.route_bar.accounts, self.route_bar.models
        self.shown, self.controller, self.turns, self.replies = (
            panel.shown,
            panel.controller,
            panel.turns,
            panel.replies,
        )
        self.edit, self.routes, self.approvals, self.intake = panel.edit, panel.routes, panel.approvals, panel.intake
        self.status_line = panel.status_line
        self.route_label, self.usage_label, self.context_label = self.status_line.labels
        self.read_only_banner = notice_label(
            "Read-only journal", "background: #fff4e5; color: #7a4b00; padding: 6px 10px;"
        )
        self.start_page = StartPage()
        self.pages = QStackedWidget()
        self.pages.addWidget(panel)
        self.pages.addWidget(self.start_page)

        splitter = QSplitter()
        splitter.addWidget(self.sidebar)
        right = QWidget()
        right_column = QVBoxLayout(right)
        right_column.setContentsMargins(0, 0, 0, 0)
        right_column.setSpacing(0)
        right_column.addWidget(self.read_only_banner)  # above both pages: a read-only journal shows on each
        self.secrets_notice = SecretsNotice(self.client)
        right_column.addWidget(self.secrets_notice)
        right_column.addWidget(self.pages, 1)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([SIDEBAR_WIDTH, 840])
        self.setCentralWidget(splitter)
        self.splitter = splitter

        self.inspector = Inspector(self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inspector)
        self.inspector.hide()

    # -- wiring --------------------------------------------------------------------------

    def _actions(self) -> None:
        def add(text: str, shortcut: str, slot: object) -> QAction:
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
        # Chat settings…, New chat from assistant
        self.chat_settings = ChatSettingsActions(
            self.client, self.shown, self, chat, button=self.route_bar.settings_button, composer=self.composer,
            bar=self.statusBar(),
        )  # fmt: skip
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
        self.shortcuts_action, self.data_action = add_help_actions(
            self, help_menu, self.paths, lambda: self.snapshot.secrets
        )
        help_menu.addSeparator()
        self.about_action = help_menu.addAction("About Cairn")
        self.about_action.triggered.connect(lambda: show_about(self, self.paths))

    def _connect(self) -> None:
        sidebar, sessions = self.sidebar, self.sessions
        self.core.reported.connect(self.panel.on_core_event)
        self.core.reported.connect(self.inspector.on_event)
        self.inspector.visibilityChanged.connect(self._inspector_shown)
        self.shown.taken.connect(self.inspector.show_session)
        sidebar.selected.connect(sessions.open)
        sidebar.selected.connect(lambda _id: self.narrow.fold())
        sidebar.search_changed.connect(self.chat.search_changed)
        sidebar.new_requested.connect(self.new_session)
        sidebar.search_changed.connect(sessions.refresh)
        sidebar.further_requested.connect(sessions.further)
        sidebar.rename_requested.connect(sessions.rename)
        sidebar.delete_requested.connect(sessions.delete)
        sidebar.undo_requested.connect(sessions.restore)
        sidebar.export_requested.connect(sessions.export)
        sidebar.pin_requested.connect(partial(sessions.mark, "pin"))
        sidebar.archive_requested.connect(partial(sessions.mark, "archive"))
        self.turns.sessions_changed.connect(sessions.refresh)
        self.controller.chat_made.connect(sessions.show_chat)
        self.controller.account_settings.connect(self._open_account_settings)
        self.chat_settings.chat_made.connect(lambda record: sessions.show_chat(record, focus=True))
        self.chat_settings.manage_requested.connect(lambda: self.open_settings(tab="assistants"))
        self.routes.has_account.connect(self._show_page)
        self.route_bar.mode_chosen.connect(self._mode_chosen)
        self.start_page.add_account.connect(self.open_settings)
        self.start_page.use_local.connect(self._use_local)
        self.start_page.use_builtin.connect(self._use_builtin)

    @property
    def session_id(self) -> str | None:
        """The chat on screen."""
        return self.shown.session_id

    @session_id.setter
    def session_id(self, session_id: str | None) -> None:
        self.shown.session_id = session_id

    @property
    def snapshot(self) -> AppSnapshot:
        """What the core last published; the only core state the window reads."""
        return self.client.snapshot

    @property
    def chat_route(self) -> ChatRouteView | None:
        return self.routes.view

    def show_error(self, error: BaseException) -> None:
        self.notice.show_error(error)

    def show_notice(self, text: str) -> None:
        self.notice.show_text(text)

    def focus_composer(self) -> None:
        """Back to writing, after a dialog or a card took the focus."""
        self.composer.take_focus()

    # -- start-up ------------------------------------------------------------------------

    def start(self, last_session: str | None) -> None:
        """Fill the window from the core: accounts, sessions, and the last chat."""
        self.routes.refresh()
        self._show_read_only()
        self.secrets_notice.check()
        self.sessions.refresh(select=last_session)

    def apply_snapshot(self, snapshot: AppSnapshot) -> None:
        """Render what the core published: accounts, the route, settings."""
        self.routes.refresh()
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

    def _show_page(self, has_account: bool) -> None:
        """The chat, or the first start's page while there is no account to chat with."""
        if has_account:
            self.pages.setCurrentIndex(0)
        else:
            self.pages.setCurrentWidget(self.start_page)
            self.start_page.probe(self.client)

    def _mode_chosen(self, mode: Mode) -> None:
        """The chat's permission mode, from its next tool call on; a chat not begun yet
        starts in it."""
        session_id = self.session_id
        if session_id is None:
            self.shown.pending_mode = mode
            return
        self.client.run_on_core(lambda app: app.options.set_mode(session_id, mode))

    def _use_local(self, preset: str, base_url: str, model: str) -> None:
        known = self.snapshot.transport.preset(preset)
        override = None if known is not None and known.base_url == base_url else base_url
        name = known.name if known is not None else preset
        account = Account(name=name, provider=preset, base_url=override, default_model=model)
        self.client.run_on_core(lambda app: app.accounts.save(account, None))

    def _use_builtin(self) -> None:
        """The Built-in account, made with the default model, as the route from now on."""

        def made(app: CairnApp) -> None:
            account = app.local.ensure_account()
            app.accounts.choose(account.id, None)

        self.client.run_on_core(made, on_error=lambda exc: self.start_page.show_builtin_problem(str(exc)))

    # -- chats ---------------------------------------------------------------------------

    def new_session(self) -> None:
        self.sessions.new()

    def compact_chat(self) -> None:
        """Summarise the chat's earlier messages now, with an optional focus for the summary."""
        session_id = self.session_id
        if session_id is None or self.pages.currentWidget() is self.start_page:
            self.statusBar().showMessage("Open a chat to compact it.", 5000)
            return
        if session_id in self.turns.busy:
            self.statusBar().showMessage("The chat is answering; compact it when the reply is done.", 5000)
            return
        focus, ok = self.ask_compaction_focus()
        self.focus_composer()
        if ok:
            self.notice.hide()
            self.turns.compact(session_id, focus.strip() or None)

    def ask_compaction_focus(self) -> tuple[str, bool]:
        """The focus note for Compact chat, and whether the person went ahead."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Compact chat")
        dialog.setLabelText(COMPACT_PROMPT)
        dialog.setOkButtonText("Compact")
        dialog.setAccessibleName("Compact chat")
        ok = dialog.exec() == QInputDialog.DialogCode.Accepted
        return dialog.textValue(), ok

    # -- window --------------------------------------------------------------------------

    def open_settings(self, preset: str | None = None, *, tab: str = "accounts", account: str | None = None) -> None:
        """The Settings dialog on ``tab``, on a new account of ``preset`` when one is given,
        else on ``account``."""

        def show(_reloaded: object) -> None:
            dialog = SettingsDialog(self, self.client, self.shown, tab=tab, preset=preset, account=account)
            dialog.theme_chosen.connect(self.theme_requested)
            dialog.text_size_chosen.connect(self.text_size_requested)
            dialog.finished.connect(self.focus_composer)
            dialog.open()
            self.settings_dialog = dialog

        # Opened on settings read afresh: the command line may have changed them meanwhile.
        self.client.run_on_core(lambda app: app.preferences.reload(), show)

    def _open_account_settings(self) -> None:
        """Settings on the account of the chat on screen (a failed request's Open account settings)."""
        route = self.chat_route
        self.open_settings(account=route.account_id if route is not None else self.snapshot.account_id)

    def zoom(self, step: int) -> None:
        """Text one point larger (1) or smaller (-1), or back to the default (0)."""
        size = QApplication.font().pointSize() + step if step else 0
        if step == 0 or TEXT_SIZES[0] <= size <= TEXT_SIZES[-1]:
            self.text_size_requested.emit(size)

    def _focus_search(self) -> None:
        self.narrow.reveal()
        self.sidebar.search.setFocus()
        self.sidebar.search.selectAll()

    def toggle_inspector(self) -> None:
        self.inspector.setVisible(not self.inspector.isVisible())

    def _inspector_shown(self, shown: bool) -> None:
        """The inspector's room comes from itself, then the sidebar, never from the route bar:
        the chat keeps the bar whole, and the inspector takes what that and the sidebar leave."""
        self.route_bar.keep_whole(shown)
        # Said outright as well: a hint alone is lost when a relayout (a snapshot refilling the
        # Model box, say) comes while the dock takes its room.
        self.pages.setMinimumWidth(self.route_bar.sizeHint().width() if shown else 0)
        if shown:
            chat = self.splitter.sizes()[0] + self.splitter.handleWidth() + self.route_bar.sizeHint().width()
            width = min(INSPECTOR_WIDTH, self.width() - chat)  # at least its minimum all the same
            self.resizeDocks([self.inspector], [width], Qt.Orientation.Horizontal)

    def restore_geometry(self, encoded: str) -> None:
        """The saved geometry, fitted to the screen it opens on: one saved on a bigger screen,
        at another scale or on a screen gone since never opens larger than the screen or off it."""
        if encoded and self.restoreGeometry(QByteArray.fromBase64(encoded.encode("ascii"))):
            fit_to_screen(self)

    def encoded_geometry(self) -> str:
        return bytes(self.saveGeometry().toBase64().data()).decode("ascii")

    def closeEvent(self, event: QCloseEvent) -> None:
        self.turns.stop_all()
        self.closed.emit()
        super().closeEvent(event)
