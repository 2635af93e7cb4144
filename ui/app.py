"""Starting and stopping Cairn's window: the Qt application, the core thread, the windows."""

from __future__ import annotations

import logging
import signal
import sys

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from assets import ASSETS_DIR
from desktop.app import LOCAL_PORTS, CairnApp
from desktop.settings import SettingsError
from host.errors import JournalError
from host.journal import Journal
from host.paths import CairnPaths
from ui.core import CoreThread
from ui.main_window import MainWindow
from ui.theme import apply_theme
from ui.window_state import WindowState

__all__ = ["Shell", "run"]

log = logging.getLogger(__name__)


class Shell(QObject):
    """The running application: one core, one app, any number of windows onto them."""

    def __init__(
        self,
        qt: QApplication,
        paths: CairnPaths,
        journal: Journal,
        app: CairnApp,
        core: CoreThread,
        *,
        local_ports: dict[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.local_ports = dict(LOCAL_PORTS if local_ports is None else local_ports)
        self.qt, self.paths, self.journal, self.app, self.core = qt, paths, journal, app, core
        self.windows: list[MainWindow] = []
        self.state_path = paths.config_dir / "window.json"
        self.dark = apply_theme(qt, app.settings.theme)
        core.crashed.connect(self._core_crashed)

    def open_window(self, state: WindowState | None = None) -> MainWindow:
        window = MainWindow(self.core, self.app)
        window.start_page.ports = dict(self.local_ports)
        window.chat.message_delegate.dark = self.dark
        window.new_window_requested.connect(self.open_window)
        window.theme_requested.connect(self.set_theme)
        window.closed.connect(lambda w=window: self._closed(w))
        self.windows.append(window)
        if state is not None:
            window.restore_geometry(state.geometry)
            window.inspector.setVisible(state.inspector_visible)
        window.start(state.last_session if state else None)
        window.show()
        return window

    def set_theme(self, theme: str) -> None:
        self.dark = apply_theme(self.qt, theme)
        for window in self.windows:
            window.chat.message_delegate.dark = self.dark
            window.chat.message_delegate.clear()
            window.chat.viewport().update()
        self.core.submit(lambda: self.app.save_appearance(theme))

    def _closed(self, window: MainWindow) -> None:
        WindowState(
            geometry=window.encoded_geometry(),
            last_session=window.session_id,
            inspector_visible=window.inspector.isVisible(),
        ).save(self.state_path)
        if window in self.windows:
            self.windows.remove(window)

    def _core_crashed(self, message: str) -> None:
        for window in self.windows:
            window.show_notice(
                f"Cairn's core stopped ({message}). What was saved is safe; copy any unsent text, then restart Cairn."
            )
            window.composer.setEnabled(False)

    def shut_down(self) -> None:
        """Stop every reply (keeping what arrived), finish deletions, close the journal."""

        async def last() -> None:
            await self.app.close()
            self.journal.purge_deleted()

        self.core.stop(last)


def run(paths: CairnPaths) -> int:
    """Open the journal and the main window; return the exit code when the last window closes."""
    qt = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(qt, QApplication)
    qt.setApplicationName("Cairn")
    qt.setWindowIcon(QIcon(str(ASSETS_DIR / "cairn.svg")))
    _quit_on_signals(qt)
    try:
        journal = Journal.open(paths.journal)
    except JournalError as exc:
        log.error("cannot open the journal: %s", exc)
        QMessageBox.critical(None, "Cairn cannot open its journal", str(exc))
        return 2
    with journal:
        core = CoreThread()
        try:
            app = CairnApp(paths, journal, on_event=core.emit_event)
        except SettingsError as exc:
            QMessageBox.critical(None, "Cairn cannot read its settings", str(exc))
            return 2
        core.start()
        shell = Shell(qt, paths, journal, app, core)
        shell.open_window(WindowState.load(shell.state_path))
        log.info("main window shown")
        code = qt.exec()
        shell.shut_down()
        log.info("main window closed")
    return code


def _quit_on_signals(qt: QApplication) -> None:
    """Let Ctrl+C and SIGTERM close Cairn cleanly instead of killing it mid-write."""

    def request_quit(signum: int, _frame: object) -> None:
        log.info("signal %d received; quitting", signum)
        for window in qt.topLevelWidgets():
            window.close()
        qt.quit()

    signal.signal(signal.SIGINT, request_quit)
    signal.signal(signal.SIGTERM, request_quit)
    # Python runs signal handlers only when it holds control; wake it up now and then.
    timer = QTimer(qt)
    timer.timeout.connect(lambda: None)
    timer.start(250)
