"""Starting and stopping Cairn's window: the Qt application, the core thread, the windows."""

from __future__ import annotations

import logging
import signal
import sys
import threading
import traceback

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from assets import ASSETS_DIR
from desktop.app import (
    LOCAL_PORTS,
    AppSnapshot,
    CairnApp,
    CairnPaths,
    CatalogError,
    JournalError,
    SettingsError,
    open_cairn,
    problem_text,
)
from ui.bridge.core_client import CoreClient, Published
from ui.bridge.core_thread import CoreThread
from ui.message_list.markdown import warm_up
from ui.widgets.theme import apply_text_size, apply_theme
from ui.window.heap import HeapKeeper
from ui.window.main_window import MainWindow
from ui.window.window_state import WindowState, fit_to_screen

__all__ = ["Shell", "run"]

log = logging.getLogger(__name__)


# Cairn's threads (the window's, the core's) share one interpreter lock, which Python hands over every
# 5 ms by default when both want it. A layout calls into Python once for each row, so while another
# thread ran Python a layout of 200 rows waited 15 to 20 ms for the lock (its own work: 2 to 5 ms),
# and scrolling a long chat stalled 51 to 60 ms. Handed over every millisecond, the longest
# stall is 35 ms; the core's own figures (search, replies) do not change measurably.
INTERPRETER_SWITCH_SECONDS = 0.001


class Shell(QObject):
    """The running application: one core, one app, any number of windows onto them. It holds
    the app only to build each window's core client and to close it; what it reads of the core
    is the snapshot the core publishes."""

    def __init__(
        self,
        qt: QApplication,
        app: CairnApp,
        core: CoreThread,
        snapshot: AppSnapshot,
        paths: CairnPaths,
        *,
        local_ports: dict[str, int] | None = None,
    ) -> None:
        super().__init__()
        self.local_ports = dict(LOCAL_PORTS if local_ports is None else local_ports)
        self.qt, self.app, self.core, self.paths = qt, app, core, paths
        self.published = Published(snapshot)
        self.client = CoreClient(core, app, self.published, _logged)
        self.windows: list[MainWindow] = []
        self.dark = apply_theme(qt, snapshot.theme)
        self.text_size = apply_text_size(qt, snapshot.text_size)
        core.crashed.connect(self._core_crashed)
        core.reported.connect(self._reported)
        self.heap = HeapKeeper(self)
        sys.setswitchinterval(INTERPRETER_SWITCH_SECONDS)
        threading.Thread(target=warm_up, name="cairn-warm-up", daemon=True).start()

    @property
    def snapshot(self) -> AppSnapshot:
        return self.published.snapshot

    def _reported(self, item: object) -> None:
        if isinstance(item, AppSnapshot):
            self.published.snapshot = item
            for window in self.windows:
                window.apply_snapshot(item)

    def open_window(self, state: WindowState | None = None) -> MainWindow:
        window = MainWindow(self.core, self.client, self.paths)
        window.start_page.ports = dict(self.local_ports)
        window.chat.message_delegate.dark = self.dark
        window.new_window_requested.connect(self.open_window)
        window.quit_requested.connect(self.quit)
        window.theme_requested.connect(self.set_theme)
        window.text_size_requested.connect(self.set_text_size)
        window.closed.connect(lambda w=window: self._closed(w))
        self.windows.append(window)
        if state is not None:
            window.restore_geometry(state.geometry)
            window.inspector.setVisible(state.inspector_visible)
        window.start(state.last_session if state else None)
        window.show()
        if state is not None and state.geometry:
            fit_to_screen(window)  # again, now that the window has its frame
        QTimer.singleShot(0, self.heap.settle)  # once the window has painted
        return window

    def set_theme(self, theme: str) -> None:
        self.dark = apply_theme(self.qt, theme)
        for window in self.windows:
            window.chat.message_delegate.dark = self.dark
            window.chat.message_delegate.clear()
            window.chat.viewport().update()
        self.client.run_on_core(lambda app: app.preferences.save_appearance(theme))

    def set_text_size(self, points: int) -> None:
        """Every window's text at ``points`` (0: Cairn's default), kept in settings."""
        self.text_size = apply_text_size(self.qt, points or None)
        for window in self.windows:
            window.chat.message_delegate.clear()
            window.chat.scheduleDelayedItemsLayout()
            window.chat.viewport().update()
        size = None if not points else self.text_size
        self.client.run_on_core(lambda app: app.preferences.save_text_size(size))

    def _closed(self, window: MainWindow) -> None:
        text = WindowState(
            geometry=window.encoded_geometry(),
            last_session=window.session_id,
            inspector_visible=window.inspector.isVisible(),
        ).text()
        self.client.run_on_core(lambda app: app.preferences.save_window_state(text))  # the core writes files
        if window in self.windows:
            self.windows.remove(window)

    def quit(self) -> None:
        """Cairn > Quit: close every window as its close button would (each stops its replies,
        keeping what arrived, and remembers its place); Cairn ends with the last one."""
        for window in list(self.windows):
            window.close()
        self.qt.quit()  # also when a stray dialog is left open (it does nothing outside the app's own loop)

    def _core_crashed(self, message: str) -> None:
        for window in self.windows:
            window.show_notice(
                f"Cairn's core stopped ({message}). What was saved is safe; copy any unsent text, then restart Cairn."
            )
            window.composer.setEnabled(False)

    def shut_down(self) -> None:
        """Stop every reply (keeping what arrived), finish deletions, close the journal."""

        self.core.stop(self.app.close)


def run(paths: CairnPaths) -> int:
    """Assemble Cairn, open the main window; return the exit code when the last window closes."""
    qt = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(qt, QApplication)
    qt.setApplicationName("Cairn")
    qt.setDesktopFileName("cairn")  # the installed menu entry, cairn.desktop: its name and icon on Wayland
    qt.setWindowIcon(QIcon(str(ASSETS_DIR / "cairn.svg")))
    _quit_on_signals(qt)
    problem = paths.problem()
    if problem is not None:
        QMessageBox.critical(None, "Cairn cannot start", problem)
        return 2
    core = CoreThread()
    try:
        app = open_cairn(paths, on_event=core.emit_event)
    except (JournalError, CatalogError) as exc:
        log.error("cannot start: %s", exc)
        QMessageBox.critical(None, "Cairn cannot start", str(exc))
        return 2
    except SettingsError as exc:
        QMessageBox.critical(None, "Cairn cannot read its settings", str(exc))
        return 2
    with app:
        core.start()
        core.submit(app.start)  # MCP servers that start with Cairn; the window does not wait for them
        shells: list[Shell] = []

        def ready(opening: tuple[AppSnapshot, str | None]) -> None:
            snapshot, remembered = opening
            shell = Shell(qt, app, core, snapshot, paths)
            shells.append(shell)
            window = shell.open_window(WindowState.parse(remembered))
            page = "start page" if window.pages.currentWidget() is window.start_page else "chat"
            log.info("main window shown (%s)", page)

        def failed(error: BaseException) -> None:
            QMessageBox.critical(None, "Cairn cannot start", problem_text(error))
            qt.exit(2)

        # The first snapshot reads the keychain, so the core makes it, and reads what the window
        # remembers of itself; the window opens with both.
        core.submit(lambda: (app.snapshot(), app.preferences.window_state()), ready, failed)
        code = qt.exec()
        if shells:
            shells[0].shut_down()
        else:
            core.stop(app.close)
        log.info("main window closed")
    return code


def _quit_on_signals(qt: QApplication) -> None:
    """Let Ctrl+C and SIGTERM close Cairn cleanly instead of killing it mid-write."""

    def close_all() -> None:
        for window in qt.topLevelWidgets():
            window.close()
        qt.quit()

    def request_quit(signum: int, _frame: object) -> None:
        # The handler runs between any two bytecodes of the main thread, perhaps inside a
        # window's constructor: closing windows from here could meet one half built, and the
        # quit would be lost with the error. Ask the event loop to do it instead; a signal that
        # comes before the loop runs (Cairn still starting) is then handled as soon as it does.
        log.info("signal %d received; quitting", signum)
        QTimer.singleShot(0, close_all)

    signal.signal(signal.SIGINT, request_quit)
    signal.signal(signal.SIGTERM, request_quit)
    # Python runs signal handlers only when it holds control; wake it up now and then.
    timer = QTimer(qt)
    timer.timeout.connect(lambda: None)
    timer.start(250)


def _logged(error: BaseException) -> None:
    log.error("core work failed: %s", "".join(traceback.format_exception(error)))
