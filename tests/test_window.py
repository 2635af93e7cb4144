"""The real app, as a process: it opens its window and closes cleanly."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from host.journal import Journal
from host.paths import CairnPaths

REPO = Path(__file__).resolve().parents[1]


def test_the_app_opens_its_window_and_closes_cleanly(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        journal.create_session("Seeded")
    log = cairn_paths.log_dir / "cairn.log"
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop"],
        cwd=REPO,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while "main window shown" not in (log.read_text() if log.exists() else ""):
            assert app.poll() is None, app.communicate()
            assert time.monotonic() < deadline, "the window never opened"
            time.sleep(0.05)
        app.send_signal(signal.SIGTERM)
        _, stderr = app.communicate(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0, stderr
    assert "main window closed" in log.read_text()
    # The journal was released: it opens again at once.
    with Journal.open(cairn_paths.journal) as journal:
        assert [s.title for s in journal.sessions()] == ["Seeded"]
