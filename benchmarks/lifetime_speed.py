"""Speed at a lifetime of history: launch, the sidebar's first paint, full-text search, opening
and scrolling a 5,000-message chat, and memory, on a journal of 10,000 sessions and 1,000,000 rows.

    .venv/bin/python -m benchmarks.lifetime_journal /tmp/cairn-lifetime   # once, about 2 minutes
    .venv/bin/python -m benchmarks.lifetime_speed /tmp/cairn-lifetime

Runs Qt offscreen against the loopback provider, as ``benchmarks.ui_speed`` does, on a copy of
the journal (so a migration the first run makes is not measured twice and the original stays).
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from benchmarks.lifetime_journal import SEED, common_prefixes, queries, vocabulary
from benchmarks.ui_speed import launch_seconds, rss_mb, run_until, shown
from desktop.loopback import LoopbackProvider
from host.journal import Journal
from host.paths import CairnPaths
from tests.ui_fixtures import add_loopback_account, running_cairn
from ui.window.main_window import MainWindow


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


class Heartbeat:
    """Gaps between 1 ms timer ticks on the GUI thread: the longest is the longest stall."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self._last = 0.0
        self._timer = QTimer(interval=1)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append((now - self._last) * 1000)
        self._last = now

    def start(self) -> None:
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> float:
        self._timer.stop()
        return max(self.gaps, default=0.0)


def sidebar_paint_ms(window: MainWindow) -> float:
    """From asking for the chat list to the sidebar painted with it."""
    window.sidebar.list.chats.fill([])
    clock = QElapsedTimer()
    clock.start()
    window.sessions.refresh(query="")
    run_until(lambda: window.sidebar.list.count() > 0)
    window.sidebar.list.viewport().repaint()
    return clock.nsecsElapsed() / 1e6


def search_ms(journal: Journal, typed: list[str]) -> list[float]:
    times = []
    for query in typed:
        started = time.perf_counter()
        journal.search_sessions(query)
        times.append((time.perf_counter() - started) * 1000)
    return times


def typing_stall_ms(window: MainWindow, typed: list[str]) -> float:
    """The longest GUI stall while queries are typed into the search box, a key every 60 ms,
    each query's results shown before the next."""
    beat = Heartbeat()
    beat.start()
    for query in typed:
        window.sidebar.search.clear()
        for key in query:
            QTest.keyClicks(window.sidebar.search, key)
            QTest.qWait(60)
        QTest.qWait(400)
    stall = beat.stop()
    window.core.submit(lambda: None).result(timeout=600)  # the searches still queued run before what follows
    return stall


def open_ms(window: MainWindow, session_id: str) -> float:
    window.session_id = None
    clock = QElapsedTimer()
    clock.start()
    window.sessions.open(session_id)
    run_until(lambda: shown(window, session_id))
    window.chat.viewport().repaint()
    return clock.nsecsElapsed() / 1e6


def scroll_stall_ms(window: MainWindow, seconds: float = 20.0) -> tuple[float, int]:
    """Page up through the open chat, a page every 16 ms, older pages loading as the top is
    reached; the longest GUI stall and how many messages were reached."""
    bar = window.chat.verticalScrollBar()
    beat = Heartbeat()
    step = QTimer(interval=16)
    step.timeout.connect(lambda: bar.setValue(bar.value() - bar.pageStep()))
    beat.start()
    step.start()
    ends = time.perf_counter() + seconds

    def top() -> bool:
        messages = window.chat.model_rows().messages
        return time.perf_counter() > ends or (bar.value() == 0 and bool(messages) and messages[0].seq == 1)

    run_until(top, timeout=seconds + 5)
    step.stop()
    return beat.stop(), len(window.chat.model_rows().messages)


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--no-prefixes"]
    if len(args) != 1:
        sys.exit(
            "usage: python -m benchmarks.lifetime_speed CAIRN_HOME [--no-prefixes]  "
            "(make CAIRN_HOME with benchmarks.lifetime_journal; --no-prefixes skips the one- and two-letter "
            "queries, which take tens of seconds each on a search without a bound)"
        )
    source = Path(args[0])
    QApplication.instance() or QApplication([])
    words = vocabulary(random.Random(SEED))
    typed = queries(words)
    prefixes = [] if "--no-prefixes" in sys.argv else common_prefixes(words)
    with tempfile.TemporaryDirectory(dir=source.parent) as folder, LoopbackProvider() as provider:
        home = Path(folder) / "home"
        shutil.copytree(source, home)
        os.sync()  # the copy's gigabyte written out first, not while the launches are timed
        os.environ["CAIRN_HOME"] = str(home)
        paths = CairnPaths.from_env()
        add_loopback_account(paths, provider)
        started = time.perf_counter()
        with Journal.open(paths.journal) as journal:  # any migration happens here, not in a launch
            migrated = time.perf_counter() - started
            long_chat = max(journal.sessions(), key=lambda s: s.created_at).id
            sessions = len(journal.sessions())
            started = time.perf_counter()
            journal.sessions()
            list_ms = (time.perf_counter() - started) * 1000
        launches = [launch_seconds(home) for _ in range(3)]
        with running_cairn(paths) as run:
            window = run.window
            paint = statistics.median(sidebar_paint_ms(window) for _ in range(3))
            core = search_ms(run.journal, typed)
            partial = search_ms(run.journal, prefixes)
            stall = typing_stall_ms(window, typed[:6])
            opened = statistics.median(open_ms(window, long_chat) for _ in range(3))
            scroll, reached = scroll_stall_ms(window)
            memory = rss_mb()

    print(f"speed at a lifetime of history ({sessions:,} sessions; Qt offscreen, loopback provider):")
    print(f"  first open of the copied journal (with any migration and its backup): {migrated:.1f} s")
    print(f"  launch to main window shown: median {statistics.median(launches) * 1000:.0f} ms (3 runs)")
    print(f"  list every session (journal.sessions): {list_ms:.0f} ms; sidebar's first paint: median {paint:.0f} ms")
    print(
        f"  search, {len(typed)} one- and two-word queries: p50 {percentile(core, 0.5):.1f} ms, "
        f"p95 {percentile(core, 0.95):.1f} ms, max {max(core):.1f} ms"
    )
    if partial:
        print(f"  search, {len(partial)} one- and two-letter prefixes of common words: max {max(partial):.1f} ms")
    print(f"  longest GUI stall while typing {len(typed[:6])} queries into the search box: {stall:.1f} ms")
    print(f"  open the 5,000-message chat: median {opened:.0f} ms")
    print(f"  scrolling up through it ({reached:,} messages reached): longest GUI stall {scroll:.1f} ms")
    print(f"  resident memory after all that: {memory:.0f} MB")


if __name__ == "__main__":
    main()
