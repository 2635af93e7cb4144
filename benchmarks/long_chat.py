"""The window on a 20,000-message chat: opening it, scrolling from the end to the first message
by the wheel (3 lines every 16 ms) and by dragging the scroll bar to the top, the longest GUI
stall on the way and the resident memory it reaches.

    .venv/bin/python -m benchmarks.long_chat [--messages N]

A stall is the longest gap between 1 ms heartbeats on the GUI thread. Opening is from asking
for the chat to its newest messages painted, the median of five. Runs Qt offscreen in a
temporary CAIRN_HOME.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from benchmarks.ui_speed import forget_shown, rss_mb, run_until, seed, shown
from desktop.loopback import LoopbackProvider
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import add_loopback_account, running_cairn
from ui.window.main_window import MainWindow

WHEEL_EVERY_MS = 16
WHEEL_STEP = 120  # one notch: three lines


class Watch:
    """The longest gap between heartbeats, and the most memory seen, while it runs."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.memory = rss_mb()
        self._last = time.perf_counter()
        self._beat = QTimer(interval=1)
        self._beat.timeout.connect(self._tick)
        self._count = 0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, (now - self._last) * 1000)
        self._last = now
        self._count += 1
        if self._count % 100 == 0:
            self.memory = max(self.memory, rss_mb())

    def __enter__(self) -> Watch:
        self._last = time.perf_counter()
        self._beat.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._beat.stop()
        self.memory = max(self.memory, rss_mb())


def at_first_message(window: MainWindow, first_seq: int) -> bool:
    view = window.chat
    messages = view.model_rows().messages
    return bool(messages) and messages[0].seq == first_seq and view.verticalScrollBar().value() == 0


def open_chat(window: MainWindow, session_id: str, other: str) -> float:
    """Milliseconds from asking for the chat to its newest messages painted."""
    forget_shown(window)
    window.sessions.open(other)
    run_until(lambda: shown(window, other))
    forget_shown(window)
    clock = QElapsedTimer()
    clock.start()
    window.sessions.open(session_id)
    run_until(lambda: shown(window, session_id))
    window.chat.viewport().repaint()
    return clock.nsecsElapsed() / 1e6


def wheel_to_top(window: MainWindow, first_seq: int) -> tuple[float, float, float]:
    """(longest stall ms, seconds, most MB) scrolling up by the wheel to the first message."""
    view = window.chat
    viewport = view.viewport()
    centre = QPointF(viewport.width() / 2, viewport.height() / 2)

    def notch() -> None:
        event = QWheelEvent(
            centre,
            QPointF(viewport.mapToGlobal(centre.toPoint())),
            QPoint(0, 0),
            QPoint(0, WHEEL_STEP),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(viewport, event)

    wheel = QTimer(interval=WHEEL_EVERY_MS)
    wheel.timeout.connect(notch)
    started = time.perf_counter()
    with Watch() as watch:
        wheel.start()
        run_until(lambda: at_first_message(window, first_seq), timeout=3600)
        wheel.stop()
    return watch.longest, time.perf_counter() - started, watch.memory


def drag_to_top(window: MainWindow, first_seq: int) -> tuple[float, float, float]:
    """The same, dragging the scroll bar's handle to the top (again as each older page comes)."""
    bar = window.chat.verticalScrollBar()

    def drag() -> None:
        if bar.value() > 0:
            bar.setSliderDown(True)
            bar.setSliderPosition(0)
            bar.setSliderDown(False)

    dragging = QTimer(interval=WHEEL_EVERY_MS)
    dragging.timeout.connect(drag)
    started = time.perf_counter()
    with Watch() as watch:
        dragging.start()
        run_until(lambda: at_first_message(window, first_seq), timeout=3600)
        dragging.stop()
    return watch.longest, time.perf_counter() - started, watch.memory


def seeded(journal_path: Path, count: int) -> tuple[str, str, int]:
    """The two chats, written in their own process so that writing them costs this one no
    memory: the window opens a journal already on disk, as a person's is."""
    with Journal.open(journal_path) as journal:
        short, long = seed(journal, 50), seed(journal, count)
        return short, long, TranscriptWriter(journal).rows(long)[0].seq


def main() -> None:
    count = int(sys.argv[sys.argv.index("--messages") + 1]) if "--messages" in sys.argv else 20_000
    QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as folder, LoopbackProvider() as provider:
        home = Path(folder) / "home"
        os.environ["CAIRN_HOME"] = str(home)
        paths = CairnPaths.from_env()
        add_loopback_account(paths, provider)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            short, long, first_seq = pool.apply(seeded, (paths.journal, count))
        with running_cairn(paths) as run:
            window = run.window
            window.resize(1100, 800)
            opened = [open_chat(window, long, short) for _ in range(5)]
            memory_open = rss_mb()
            wheel = wheel_to_top(window, first_seq)
            open_chat(window, long, short)
            drag = drag_to_top(window, first_seq)
    print(f"a {count:,}-message chat (Qt offscreen):")
    print(f"  open: median {statistics.median(opened):.1f} ms (5 runs); {memory_open:.0f} MB resident")
    for name, (stall, seconds, memory) in (("wheel to the top", wheel), ("drag the bar to the top", drag)):
        print(f"  {name}: longest stall {stall:.1f} ms · {seconds:.1f} s · at most {memory:.0f} MB resident")


if __name__ == "__main__":
    main()
