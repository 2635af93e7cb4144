"""Saving and removing a server in the MCP tab, with the questions asked first.

Where a server's secrets have nowhere to be kept (no keychain, no secrets file chosen), what
was typed stays in the form until the person says where they go: memory for this run, a file
from now on, or back to the form. A change to the folders a server sees (roots) is saved only
after the person has read what the server will then reach. Removing a server waits for a
"Remove" that was read."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.app import McpServerSetting, RootsChange, SecretsNotKept, ServerView, printable, problem_text
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.keys_questions import FileChoice, NowhereQuestion
from ui.settings_dialog.mcp_form import McpServerForm
from ui.settings_dialog.mcp_roots import RootsQuestion

__all__ = ["McpSaving", "McpTabParts"]


class McpTabParts(Protocol):
    """What saving needs of the MCP tab: its form, the server picked, and how it says things."""

    form: McpServerForm

    def selected(self) -> ServerView | None: ...

    def say(self, text: str) -> None: ...

    def refresh(self, select: str | None = None) -> None: ...

    def show_server(self, server: McpServerSetting | None) -> None: ...


class McpSaving:
    """The tab's Save and Remove; its questions open over ``parent``. ``confirmation`` is the
    box open now, if any."""

    def __init__(self, core: CoreClient, parent: QWidget, tab: McpTabParts) -> None:
        self.core, self.parent, self.tab = core, parent, tab
        self.confirmation: QMessageBox | None = None
        self.file_choice = FileChoice(core, parent, tab.say)

    def save(self, *, memory_only: bool = False, roots_agreed: bool = False) -> None:
        tab = self.tab
        try:
            fields, env, headers = tab.form.entered()
        except ValueError as exc:
            tab.say(problem_text(exc))
            return
        replacing = tab.form.editing.name if tab.form.editing is not None else None
        if not roots_agreed:  # what the server will reach changes: the person says yes first

            def checked(change: RootsChange | None) -> None:
                if change is None:
                    self.save(memory_only=memory_only, roots_agreed=True)
                else:
                    self._ask_roots(change, memory_only)

            self.core.run_on_core(
                lambda app: app.mcp.roots_change(fields, replacing), checked, lambda e: tab.say(problem_text(e))
            )
            return

        def saved(server: McpServerSetting) -> None:
            tab.show_server(server)  # what was typed in a secret's field is kept elsewhere now, not here
            has_secrets = bool(server.secret_env or server.secret_headers)
            kept = " Its secrets are kept until Cairn closes." if memory_only and has_secrets else ""
            tab.say(f"Saved {server.name}.{kept}")
            tab.refresh(select=server.name)

        def failed(error: BaseException) -> None:
            if isinstance(error, SecretsNotKept):
                tab.say("")
                self._ask_where(error)
                return
            tab.say(problem_text(error))

        tab.say("Saving…")
        self.core.run_on_core(
            lambda app: app.mcp.save(fields, env, headers, replacing, memory_only=memory_only), saved, failed
        )

    def _ask_roots(self, change: RootsChange, memory_only: bool) -> None:
        box = RootsQuestion(self.parent, change)

        def answered(_result: int) -> None:
            self.confirmation = None
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                self.save(memory_only=memory_only, roots_agreed=True)
            else:
                self.tab.say("The server is not saved; its folders are as they were, and the form keeps your changes.")
            box.deleteLater()

        box.finished.connect(answered)
        self.confirmation = box
        box.open()

    def _ask_where(self, error: SecretsNotKept) -> None:
        box = NowhereQuestion(self.parent, str(error), error.problem)

        def answered(_result: int) -> None:
            self.confirmation = None
            clicked = box.clickedButton()
            if clicked is box.keep:
                self.save(memory_only=True, roots_agreed=True)
            elif clicked is box.file:
                self.file_choice.use(then=lambda: self.save(roots_agreed=True))
            else:
                self.tab.say("The server is not saved; what you typed is still in the form.")
            box.deleteLater()

        box.finished.connect(answered)
        self.confirmation = box
        box.open()

    def ask_remove(self) -> None:
        view = self.tab.selected()
        if view is None or view.setting is None:
            return
        name = view.name
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove MCP server",
            f"Remove the MCP server {printable(name)!r}? Its secrets are forgotten, and its tools leave every chat "
            "from the next message.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            self.parent,
        )
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.button(QMessageBox.StandardButton.Yes).setText("Remove")
        box.accepted.connect(lambda: self._remove(name))
        self.confirmation = box
        box.open()

    def _remove(self, name: str) -> None:
        tab = self.tab

        def removed(_result: object) -> None:
            tab.show_server(None)
            tab.say(f"Removed {name}.")
            tab.refresh()

        self.core.run_on_core(lambda app: app.mcp.remove(name), removed, lambda e: tab.say(problem_text(e)))

    def close_questions(self) -> None:
        """Close a question still open (Settings is closing): nothing it would have done happens."""
        self.file_choice.close_question()
        if self.confirmation is not None and self.confirmation.isVisible():
            self.confirmation.reject()
