"""The MCP servers tab of Settings: each server with its live status, its form, and import
from Claude Desktop.

The tab shows snapshots the core hands over (``ServerView``) and asks the core for every
change; it never reads the settings, the secrets or a server itself. Live status comes from
the hub's own notifications (``McpHub.subscribe``), carried to the GUI thread by a queued
signal, so a server that becomes ready or fails shows at once, with no polling.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.app import (
    McpServerSetting,
    ServerState,
    ServerStatus,
    ServerView,
    Tool,
    printable,
    problem_text,
)
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.claude_import import ClaudeImport, ImportPreview
from ui.settings_dialog.mcp_details import StatusDetails
from ui.settings_dialog.mcp_form import McpServerForm
from ui.settings_dialog.mcp_phrases import state_phrase, status_dot, status_phrase
from ui.settings_dialog.mcp_saving import McpSaving
from ui.settings_dialog.mcp_sign_in import SignIn
from ui.settings_dialog.unsaved import UnsavedGuard

__all__ = ["McpTab"]


class _Relay(QObject):
    """Carries a view from the core thread to the GUI thread (a queued signal)."""

    changed = Signal(object)


class McpTab(QWidget):
    def __init__(self, core: CoreClient) -> None:
        super().__init__()
        self.core = core
        self.views: dict[str, ServerView] = {}
        self._unsubscribe: Callable[[], None] | None = None
        self._stopped = False
        self.importing = ClaudeImport(core, self, say=self.say, failed=self._failed, imported=self._imported)
        self.saving = McpSaving(core, self, self)
        layout = QHBoxLayout(self)
        layout.addLayout(self._build_list(), 2)
        layout.addLayout(self._build_editor(), 3)
        self.guard = UnsavedGuard(self, self._describe, self._differs)
        self._shown_values: object = None  # the form's values as last shown, to tell a change from them
        self._load(None)
        self._show_selected()
        self._relay = _Relay(self)
        self._relay.changed.connect(self._changed)
        relay = self._relay

        def heard(view: ServerView) -> None:  # on the core thread
            with contextlib.suppress(RuntimeError):  # the tab is gone and its unsubscribe is on its way
                relay.changed.emit(view)

        core.run_on_core(lambda app: app.mcp.watch(heard), self._watching, self._failed)

    # -- building ----------------------------------------------------------------------------

    def _build_list(self) -> QVBoxLayout:
        self.list = QListWidget()
        self.list.setAccessibleName("MCP servers")
        self.list.setWordWrap(True)
        self.list.currentItemChanged.connect(self._chosen)
        self.new = QPushButton("New server")
        self.remove = QPushButton("Remove…")
        self.import_claude = QPushButton("Import from Claude Desktop…")
        self.import_file = QPushButton("Import a file…")
        self.state = QLabel()
        self.state.setWordWrap(True)
        self.state.setTextFormat(Qt.TextFormat.PlainText)  # a server's words are never markup
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = StatusDetails(self.core, self.selected_name)
        self.stderr = self.details.box
        self.restart = QPushButton("Restart")
        self.test = QPushButton("Test")
        self.toggle = QPushButton("Disable")
        self.signing = SignIn(self.core, self.say, self._failed, self.selected)
        for widget, name in (
            (self.new, "New MCP server"), (self.remove, "Remove MCP server"),
            (self.import_claude, "Import from Claude Desktop"), (self.import_file, "Import a Claude Desktop file"),
            (self.state, "Server status"),
            (self.restart, "Restart server"), (self.test, "Test server"), (self.toggle, "Disable or enable server"),
        ):  # fmt: skip
            widget.setAccessibleName(name)
        self.new.clicked.connect(self.new_server)
        self.remove.clicked.connect(self.saving.ask_remove)
        self.import_claude.clicked.connect(lambda: self.import_from(None))
        self.import_file.clicked.connect(self.importing.choose)
        self.restart.clicked.connect(self._restart)
        self.test.clicked.connect(self._test)
        self.toggle.clicked.connect(self._toggle)

        status = QGroupBox("Status")
        box = QVBoxLayout(status)
        box.addWidget(self.state)
        box.addWidget(self.stderr)
        actions = QHBoxLayout()
        for button in (self.signing.button, self.signing.out, self.restart, self.test, self.toggle):
            actions.addWidget(button)
        box.addLayout(actions)

        left = QVBoxLayout()
        left.addWidget(self.list, 1)
        row = QHBoxLayout()
        row.addWidget(self.new)
        row.addWidget(self.remove)
        left.addLayout(row)
        row = QHBoxLayout()
        row.addWidget(self.import_claude)
        row.addWidget(self.import_file)
        left.addLayout(row)
        left.addWidget(status)
        return left

    def _build_editor(self) -> QVBoxLayout:
        self.form = McpServerForm(self.core)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.form)
        scroll.viewport().setAutoFillBackground(False)  # the tab's own background, not a panel
        self.form.setAutoFillBackground(False)
        self.save = QPushButton("Save server")
        self.save.setAccessibleName("Save MCP server")
        self.save.clicked.connect(lambda _checked=False: self.saving.save())
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setAccessibleName("MCP servers message")
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right = QVBoxLayout()
        right.addWidget(scroll, 1)
        row = QHBoxLayout()
        row.addWidget(self.message, 1)
        row.addWidget(self.save, 0, Qt.AlignmentFlag.AlignTop)
        right.addLayout(row)
        return right

    # -- live status -------------------------------------------------------------------------

    def _watching(self, result: tuple[list[ServerView], Callable[[], None]]) -> None:
        views, unsubscribe = result
        self._unsubscribe = unsubscribe
        if self._stopped:
            self.stop_watching()
            return
        self.show_views(views)

    def stop_watching(self) -> None:
        """Stop hearing about status changes (the dialog closed)."""
        self._stopped = True
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            self.core.run_on_core(lambda _app: unsubscribe(), None, lambda _e: None)

    @Slot(object)
    def _changed(self, view: ServerView) -> None:
        known = view.name in self.views
        self.views[view.name] = view
        if not known:  # one more row; rebuilding the list on every event churns Qt for nothing
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, view.name)
            self._paint(item, view)
            self.list.addItem(item)
            return
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == view.name:
                self._paint(item, view)
        if self.selected_name() == view.name:
            self._show_selected()

    def refresh(self, select: str | None = None) -> None:
        """Ask the core for the servers afresh (after a change made here)."""
        self.core.run_on_core(lambda app: app.mcp.views(), lambda views: self.show_views(views, select), self._failed)

    def show_views(self, views: list[ServerView], select: str | None = None) -> None:
        self.views = {view.name: view for view in views}
        self._fill(select or self.selected_name())

    def _fill(self, select: str | None) -> None:
        if select is None and self.form.editing is not None:
            select = self.form.editing.name  # a server just saved: it joins the list selected
        self.list.blockSignals(True)
        self.list.clear()
        for view in self.views.values():
            item = QListWidgetItem()
            item.setData(Qt.ItemDataRole.UserRole, view.name)
            self._paint(item, view)
            self.list.addItem(item)
        names = list(self.views)
        row = names.index(select) if select in names else -1
        self.list.setCurrentRow(row)
        self.list.blockSignals(False)
        if row >= 0 or self.form.editing is not None:  # else a new server is being typed: it stays
            self._pick()  # the server shown, or an empty form when the one in it is gone
        else:
            self._show_selected()

    def _paint(self, item: QListWidgetItem, view: ServerView) -> None:
        item.setText(f"{printable(view.name)}\n{printable(status_phrase(view))}")
        item.setIcon(status_dot(view))

    def selected_name(self) -> str | None:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def selected(self) -> ServerView | None:
        name = self.selected_name()
        return self.views.get(name) if name is not None else None

    def show_server(self, server: McpServerSetting | None) -> None:
        """The server as saved (``None``: removed), in the form: nothing in it is a change."""
        self._load(server)

    def _load(self, server: McpServerSetting | None) -> None:
        self.form.load(server)
        self._shown_values = self._values()

    def _values(self) -> object:
        try:
            return self.form.entered()
        except ValueError as exc:  # a row half typed: a change all the same
            return str(exc)

    def _differs(self) -> bool:
        return self.form.isEnabled() and self._values() != self._shown_values

    def _describe(self) -> str:
        name = self.form.name.text().strip()
        return f"the MCP server “{printable(name)}”" if name else "the new MCP server"

    def _chosen(self, _now: QListWidgetItem | None, before: QListWidgetItem | None) -> None:
        """A server picked in the list; changes to the one in the form are not lost unasked."""

        def stay() -> None:
            self.list.blockSignals(True)
            if before is not None:
                self.list.setCurrentItem(before)
            else:
                self.list.setCurrentRow(-1)
            self.list.blockSignals(False)

        self.guard.leave(self._picked, stay=stay)

    def _picked(self) -> None:
        """The person chose another server: what was said of the last one no longer applies."""
        self.message.clear()
        self._pick()

    def _pick(self) -> None:
        view = self.selected()
        if self.guard.unsaved() is not None and view is not None and view.setting == self.form.editing:
            self._show_selected()  # the list was filled afresh: the person's changes stay in the form
            return
        self._load(view.setting if view is not None else None)
        self.form.setEnabled(view is None or view.setting is not None)
        self.save.setEnabled(view is None or view.setting is not None)
        self._show_selected()

    def _show_selected(self) -> None:
        view = self.selected()
        self.remove.setEnabled(view is not None and view.setting is not None)
        self.test.setEnabled(view is not None and view.setting is not None)
        self.restart.setEnabled(view is not None and view.enabled and not view.problem)
        self.toggle.setEnabled(view is not None and view.setting is not None)
        disabled = view is not None and view.setting is not None and not view.enabled
        self.toggle.setText("Enable" if disabled else "Disable")
        self.signing.show_for(view)
        if view is None:
            self.state.setText("Pick a server to see how it is, or fill in the form to add one.")
            self.details.show(None)
            return
        self.state.setText(printable(f"{view.name}: {status_phrase(view)}"))
        self.details.show(view)

    # -- changes -----------------------------------------------------------------------------

    def new_server(self) -> None:
        self.guard.leave(self._new_server)

    def _new_server(self) -> None:
        self.list.blockSignals(True)
        self.list.setCurrentRow(-1)
        self.list.blockSignals(False)
        self._load(None)
        self.form.setEnabled(True)
        self.save.setEnabled(True)
        self.form.name.setFocus()
        self.say("")

    def _toggle(self) -> None:
        view = self.selected()
        if view is None or view.setting is None:
            return
        name, enabled = view.name, not view.enabled

        def done(server: McpServerSetting) -> None:
            self.say(f"{server.name} is {'enabled' if server.enabled else 'disabled'}.")
            self.refresh(select=server.name)

        self.core.run_on_core(lambda app: app.mcp.set_enabled(name, enabled), done, self._failed)

    def _restart(self) -> None:
        view = self.selected()
        if view is None:
            return
        name = view.name
        self.say(f"Restarting {name}…")
        self.core.run_on_core(
            lambda app: app.mcp.restart(name), lambda v: self.say(f"{v.name}: {status_phrase(v)}"), self._failed
        )

    def _test(self) -> None:
        view = self.selected()
        if view is None:
            return
        name = view.name

        def tested(result: tuple[ServerStatus, list[Tool]]) -> None:
            status, _tools = result
            if status.state is ServerState.READY:
                self.say(f"Test: {name} started and is {state_phrase(status)}.")
            else:
                self.say(f"Test: {name} {state_phrase(status)}")
                self.details.show_text(status.stderr_tail)

        self.say(f"Testing {name}: starting it on its own…")
        self.core.run_on_core(lambda app: app.mcp.test(name), tested, self._failed)

    @property
    def confirmation(self) -> QMessageBox | None:
        """The question open now over the tab (remove a server, where its secrets go)."""
        return self.saving.confirmation

    # -- import ------------------------------------------------------------------------------

    def import_from(self, path: Path | None) -> None:
        """Show what importing ``path`` (default: Claude Desktop's own file) would add."""
        self.importing.start(path)

    @property
    def preview(self) -> ImportPreview | None:
        return self.importing.preview

    def _imported(self, first: str | None) -> None:
        self.refresh(select=first)

    # -- plumbing ----------------------------------------------------------------------------

    def say(self, text: str) -> None:
        self.message.setText(printable(text))

    def _failed(self, error: BaseException) -> None:
        self.say(problem_text(error))
