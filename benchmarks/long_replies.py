"""The window while very long replies stream: the longest GUI stall, the time the reply took,
and the memory it cost, for replies of 200 KB, 1 MB and 2 MB sent in pieces of 20 and 2,000
characters (2 MB also a character at a time and in one piece).

    .venv/bin/python -m benchmarks.long_replies [--quick]

A stall is the longest gap between 1 ms heartbeats on the GUI thread, from the request to the
saved reply shown. Memory is the peak resident size during the reply minus the size just
before it (after a garbage collection), the median of three runs. Runs Qt offscreen against
the loopback provider (in a process of its own, as a real provider is), in a temporary
CAIRN_HOME; ``--quick`` runs each case once and leaves
out the character-at-a-time one.
"""

from __future__ import annotations

import gc
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from benchmarks.loopback_process import LoopbackProcess
from benchmarks.ui_speed import run_until
from desktop.loopback import Reply
from host.paths import CairnPaths
from tests.ui_fixtures import add_loopback_account, running_cairn
from ui.window.main_window import MainWindow

KB = 1024


def reply_text(size: int) -> str:
    """Markdown as a long answer reads: numbered paragraphs with emphasis, and code blocks,
    no two blocks alike (so nothing is rendered from a cache)."""
    pieces = []
    length = 0
    n = 0
    while length < size:
        piece = (
            f"Step {n}: cairns are **piles of stones** that mark trails, summits and memorials; walkers add "
            f"stone number {n} as they pass, so a cairn grows with the path it marks.\n\n"
            f"```python\nfor stone in cairn_{n}:\n    print(stone, {n})\n```\n\n"
        )
        pieces.append(piece)
        length += len(piece)
        n += 1
    return "".join(pieces)[:size]


def _kb(line: str) -> int:
    return int(line.split()[1])


def memory() -> tuple[float, float]:
    """Resident and peak resident size, in MB."""
    status = {line.split(":")[0]: line for line in Path("/proc/self/status").read_text().splitlines() if ":" in line}
    return _kb(status["VmRSS"]) / KB, _kb(status["VmHWM"]) / KB


def reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # the peak starts again from now


def one_reply(window: MainWindow, provider: LoopbackProcess, text: str, chunk: int) -> tuple[float, float, float]:
    """(longest stall ms, seconds, MB over the size before) for one reply of ``text``."""
    window.new_session()  # saved with its first message
    provider.script(Reply(text=text, chunk_chars=chunk))
    gc.collect()
    before, _ = memory()
    reset_peak()
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last[0]) * 1000)
        last[0] = now

    heartbeat = QTimer(interval=1)
    heartbeat.timeout.connect(tick)
    started = last[0] = time.perf_counter()
    heartbeat.start()
    window.controller.send("Write it all out.")
    run_until(lambda: not window.turns.busy and _shown(window, len(text)), timeout=1800)
    window.chat.viewport().repaint()
    heartbeat.stop()
    seconds = time.perf_counter() - started
    _, peak = memory()
    return max(gaps), seconds, peak - before


def _shown(window: MainWindow, size: int) -> bool:
    last = window.chat.model_rows().last_of("assistant")
    return last is not None and last.status == "complete" and len(last.text) == size


def main() -> None:
    quick = "--quick" in sys.argv
    QApplication.instance() or QApplication([])
    cases = [(200 * KB, 20), (200 * KB, 2000), (1024 * KB, 20), (1024 * KB, 2000), (2048 * KB, 20), (2048 * KB, 2000)]
    cases.append((2048 * KB, 2048 * KB))
    if not quick:
        cases.append((2048 * KB, 1))
    runs = 1 if quick else 3
    with tempfile.TemporaryDirectory() as folder, LoopbackProcess() as provider:
        os.environ["CAIRN_HOME"] = str(Path(folder) / "home")
        paths = CairnPaths.from_env()
        add_loopback_account(paths, provider)  # type: ignore[arg-type]  # it has the base_url
        print("long replies (Qt offscreen, loopback provider):")
        with running_cairn(paths) as run:
            for size, chunk in cases:
                text = reply_text(size)
                results = [one_reply(run.window, provider, text, chunk) for _ in range(runs)]
                stall = max(r[0] for r in results)
                seconds = statistics.median(r[1] for r in results)
                grown = statistics.median(r[2] for r in results)
                pieces = "one piece" if chunk >= size else f"pieces of {chunk:,}"
                print(
                    f"  {size // KB:>5,} KB in {pieces:<17} longest stall {stall:7.1f} ms · {seconds:6.1f} s · "
                    f"memory +{grown:5.1f} MB ({grown * KB / (size / KB):.1f} x the reply)"
                )


if __name__ == "__main__":
    main()
