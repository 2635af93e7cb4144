"""Signing in to a remote MCP server from Settings: a "Sign in…" button beside a server whose
entry signs in through the browser; the status says when the server waits for it (never
signed in, or its tokens refused). "Sign out" forgets its tokens, and the running server
starts again without them.

The sign-in runs on the core (``app.mcp.sign_in``); the browser is opened on the GUI thread,
through a queued signal, because the core asks for it from its own thread.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QPushButton

from desktop.app import ServerView
from ui.bridge.core_client import CoreClient
from ui.settings_dialog.mcp_phrases import status_phrase

__all__ = ["SignIn"]


class SignIn(QObject):
    open_url = Signal(str)  # emitted on the core's thread; opened on the GUI thread

    def __init__(
        self,
        core: CoreClient,
        say: Callable[[str], None],
        failed: Callable[[BaseException], None],
        selected: Callable[[], ServerView | None],
    ) -> None:
        super().__init__()
        self.core, self.say, self.failed, self.selected = core, say, failed, selected
        self.button = QPushButton("Sign in…")
        self.button.setAccessibleName("Sign in to server")
        self.button.setToolTip("Opens your browser to sign in to this server; Cairn keeps the sign-in in the keychain.")
        self.button.hide()
        self.button.clicked.connect(self.sign_in)
        self.out = QPushButton("Sign out")
        self.out.setAccessibleName("Sign out of server")
        self.out.setToolTip("Forgets this server's sign-in; Cairn stops using it at once.")
        self.out.hide()
        self.out.clicked.connect(self.sign_out)
        self.open_url.connect(self._open)
        self.opener: Callable[[QUrl], object] = QDesktopServices.openUrl  # a test's seam

    def show_for(self, view: ServerView | None) -> None:
        signs_in = view is not None and view.setting is not None and view.setting.oauth is not None
        self.button.setVisible(signs_in)
        self.button.setEnabled(signs_in and view is not None and view.enabled and not view.problem)
        self.out.setVisible(signs_in)
        self.out.setEnabled(signs_in)

    def sign_in(self) -> None:
        view = self.selected()
        if view is None:
            return
        name = view.name
        self.say(f"Your browser opens to sign in to {name}; come back here when it says you are done.")
        self.button.setEnabled(False)

        def done(now: ServerView) -> None:
            self.say(f"{now.name}: {status_phrase(now)}")
            self.show_for(self.selected())

        def refused(error: BaseException) -> None:
            self.failed(error)
            self.show_for(self.selected())

        self.core.run_on_core(lambda app: app.mcp.sign_in(name, self.open_url.emit), done, refused)

    def sign_out(self) -> None:
        view = self.selected()
        if view is None:
            return
        name = view.name
        self.out.setEnabled(False)

        def done(kept: bool) -> None:
            self.say(f"Signed out of {name}: its sign-in is forgotten." if kept else f"{name} was not signed in.")
            self.show_for(self.selected())

        def refused(error: BaseException) -> None:
            self.failed(error)
            self.show_for(self.selected())

        self.core.run_on_core(lambda app: app.mcp.sign_out(name), done, refused)

    def _open(self, url: str) -> None:
        if not self.opener(QUrl(url)):
            self.say(f"Cairn could not open a browser. Open this address in one to sign in: {url}")
