"""The real app, as a process: it opens its window and closes cleanly."""

import json
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
        # Quitting stops the server in order within its own bounded limits (stdin closed, 5 s
        # to exit, then signals: about 16 s at worst); on a loaded machine that takes a while.
        _, stderr = app.communicate(timeout=90)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0, stderr
    assert "main window closed" in log.read_text()
    # The journal was released: it opens again at once.
    with Journal.open(cairn_paths.journal) as journal:
        assert [s.title for s in journal.sessions()] == ["Seeded"]


def test_a_server_that_starts_with_cairn_starts_with_the_window(cairn_paths: CairnPaths, tmp_path: Path) -> None:
    marker = tmp_path / "launched"
    launched = "import pathlib, sys; pathlib.Path(sys.argv[1]).touch(); sys.stdin.read()"
    server = {
        "name": "early",
        "command": sys.executable,
        "args": ["-c", launched, str(marker)],
        "start_at_launch": True,
    }
    cairn_paths.config_dir.mkdir(parents=True, exist_ok=True)
    (cairn_paths.config_dir / "settings.json").write_text(json.dumps({"schema_version": 1, "mcp_servers": [server]}))
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
        while not marker.exists():  # the window's Cairn ran the server's command, without a chat asking
            assert app.poll() is None, app.communicate()
            assert time.monotonic() < deadline, "the server was never started"
            time.sleep(0.05)
        app.send_signal(signal.SIGTERM)
        # Quitting stops the server in order within its own bounded limits (stdin closed, 5 s
        # to exit, then signals: about 16 s at worst); on a loaded machine that takes a while.
        _, stderr = app.communicate(timeout=90)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0, stderr
