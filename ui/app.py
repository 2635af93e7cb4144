"""Starting and stopping the Qt application."""

from __future__ import annotations

import logging
import signal
import sys

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from assets import ASSETS_DIR
from host.errors import JournalError
from host.journal import Journal
from host.paths import CairnPaths
from ui.main_window import MainWindow

__all__ = ["run"]

log = logging.getLogger(__name__)


def run(paths: CairnPaths) -> int:
    """Open the journal and the main window; return the exit code when the window closes."""
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("Cairn")
    app.setWindowIcon(QIcon(str(ASSETS_DIR / "cairn.svg")))
    _quit_on_signals(app)

    try:
        journal = Journal.open(paths.journal)
    except JournalError as exc:
        log.error("cannot open the journal: %s", exc)
        QMessageBox.critical(None, "Cairn cannot open its journal", str(exc))
        return 2

    with journal:
        window = MainWindow(journal.sessions())
        window.show()
        log.info("main window shown")
        code = app.exec()
        log.info("main window closed")
    return code


def _quit_on_signals(app: QApplication) -> None:
    """Let Ctrl+C and SIGTERM close Cairn cleanly instead of killing it mid-write."""

    def request_quit(signum: int, _frame: object) -> None:
        log.info("signal %d received; quitting", signum)
        app.quit()

    signal.signal(signal.SIGINT, request_quit)
    signal.signal(signal.SIGTERM, request_quit)
    # Python runs signal handlers only when it holds control; wake it up now and then.
    timer = QTimer(app)
    timer.timeout.connect(lambda: None)
    timer.start(250)
