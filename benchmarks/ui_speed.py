"""The window's speed figures: launch, opening short and long chats, GUI stalls while a reply
streams at 200 tokens per second, and memory with a 5,000-message chat open.

    .venv/bin/python -m benchmarks.ui_speed

Runs Qt offscreen against the loopback provider, in a temporary CAIRN_HOME.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from desktop.loopback import LoopbackProvider, Reply, tokenize
from host.journal import Journal
from host.paths import CairnPaths
from host.transcript import TranscriptWriter
from tests.ui_fixtures import add_loopback_account, running_cairn
from ui.window.main_window import MainWindow

REPO = Path(__file__).resolve().parents[1]
PARAGRAPH = (
    "Cairns are **piles of stones** that mark trails, summits and memorials. Walkers add a stone as they "
    "pass, so a cairn grows with the path it marks.\n\n```python\nfor stone in cairn:\n    print(stone)\n```\n"
)


def launch_seconds(home: Path) -> float:
    """From starting ``python -m desktop`` to the main window shown, with Cairn's modules
    compiled ahead as ``make run`` does (this machine sets PYTHONDONTWRITEBYTECODE)."""
    for package in ("desktop", "host", "ui"):
        compileall.compile_dir(REPO / package, quiet=1)
    log = home / "logs" / "cairn.log"
    log.unlink(missing_ok=True)
    start = time.perf_counter()
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop"],
        cwd=REPO,
        env={**os.environ, "CAIRN_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    while "main window shown" not in (log.read_text() if log.exists() else ""):
        time.sleep(0.005)
    elapsed = time.perf_counter() - start
    app.terminate()
    app.wait(30)
    return elapsed


def seed(journal: Journal, messages: int) -> str:
    writer = TranscriptWriter(journal)
    session = journal.create_session(f"{messages} messages")
    for n in range(messages):
        parts = [{"kind": "text", "text": f"Message {n}. " + PARAGRAPH}]
        if n % 2 == 0:
            writer.append_user(session.id, {"parts": parts})
        else:
            writer.append_assistant(session.id, {"parts": parts, "model": "custom/loopback-chat", "status": "complete"})
    return session.id


def run_until(done: Callable[[], bool], timeout: float = 60.0) -> None:
    """Run Qt's event loop (a real one, as the app does) until ``done()`` holds."""
    loop = QEventLoop()
    check = QTimer(interval=2)
    check.timeout.connect(lambda: loop.quit() if done() else None)
    QTimer.singleShot(int(timeout * 1000), loop.quit)
    check.start()
    loop.exec()
    check.stop()
    if not done():
        raise TimeoutError("the window did not get there in time")


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def forget_shown(window: MainWindow) -> None:
    """No chat on screen, so that ``shown`` waits for the next one's own rows (opening a chat
    leaves the last one's rows up until its page arrives)."""
    window.session_id = None
    window.chat.model_rows().reset([])


def shown(window: MainWindow, session_id: str) -> bool:
    messages = window.chat.model_rows().messages
    return window.session_id == session_id and bool(messages) and messages[0].seq is not None


def measure_open(window: MainWindow, short: str, long: str) -> tuple[dict[str, list[float]], float]:
    """Milliseconds from asking for a chat to its newest messages painted; RSS after the long one."""
    timings: dict[str, list[float]] = {short: [], long: []}
    memory = 0.0
    for _ in range(5):
        for session_id in (short, long):
            forget_shown(window)
            clock = QElapsedTimer()
            clock.start()
            window.sessions.open(session_id)
            run_until(lambda s=session_id: shown(window, s))
            window.chat.viewport().repaint()
            timings[session_id].append(clock.nsecsElapsed() / 1e6)
            if session_id == long:
                memory = rss_mb()
    return timings, memory


def measure_stream(window: MainWindow, provider: LoopbackProvider) -> tuple[list[float], float, int]:
    """Gaps between 1 ms heartbeats on the GUI thread while a long Markdown reply streams."""
    reply = PARAGRAPH * 60
    provider.script(Reply(text=reply, chunk_chars=6, chunk_delay=0.0045))  # about 200 deltas a second
    gaps: list[float] = []
    last = [0.0]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000)
        last[0] = now

    heartbeat = QTimer(interval=1)
    heartbeat.timeout.connect(tick)
    window.controller.send("Tell me about cairns.")
    run_until(lambda: window.replies.streaming(window.session_id or ""))
    started = last[0] = time.perf_counter()
    heartbeat.start()
    run_until(lambda: not window.turns.busy)
    heartbeat.stop()
    return sorted(gaps), time.perf_counter() - started, len(tokenize(reply))


def main() -> None:
    QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as folder, LoopbackProvider() as provider:
        home = Path(folder) / "home"
        os.environ["CAIRN_HOME"] = str(home)
        paths = CairnPaths.from_env()
        add_loopback_account(paths, provider)
        with Journal.open(paths.journal) as journal:
            short, long = seed(journal, 50), seed(journal, 5000)
        launches = [launch_seconds(home) for _ in range(3)]
        with running_cairn(paths) as run:
            timings, memory = measure_open(run.window, short, long)
            run.window.new_session()  # saved with its first message
            gaps, seconds, tokens = measure_stream(run.window, provider)

    print("window speed (Qt offscreen, loopback provider):")
    print(f"  launch to main window shown: median {statistics.median(launches) * 1000:.0f} ms (3 runs)")
    s, lng = statistics.median(timings[short]), statistics.median(timings[long])
    print(f"  open a 50-message chat:    median {s:.1f} ms")
    print(f"  open a 5,000-message chat: median {lng:.1f} ms ({lng / s:.2f}x the 50-message chat)")
    print(f"  resident memory with the 5,000-message chat open: {memory:.0f} MB")
    print(
        f"  streaming {tokens:,} tokens over {seconds:.1f} s ({tokens / seconds:.0f} tokens/s): longest GUI stall "
        f"{gaps[-1]:.1f} ms, 99th percentile {gaps[int(len(gaps) * 0.99)]:.1f} ms"
    )


if __name__ == "__main__":
    main()
