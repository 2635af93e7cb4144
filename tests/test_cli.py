"""The headless `cairn` commands, run as a person would run them."""

import os
import subprocess
import sys

from host.journal import Journal
from host.paths import CairnPaths
from tests.cli_fixtures import REPO, cairn


def test_sessions_lists_the_journal(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        journal.create_session("Trip to the coast")
        empty = journal.create_session()
    done = cairn("sessions")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(empty.id)
    assert lines[0].endswith("(untitled)")
    assert lines[1].endswith("Trip to the coast")


def test_sessions_on_an_empty_journal(cairn_paths: CairnPaths) -> None:
    done = cairn("sessions")
    assert done.returncode == 0
    assert done.stdout.strip() == "No sessions yet."
    assert cairn_paths.journal.exists()


def test_a_broken_journal_gets_a_clear_message_and_is_kept(cairn_paths: CairnPaths) -> None:
    cairn_paths.data_dir.mkdir(parents=True)
    cairn_paths.journal.write_text("hello")
    done = cairn("sessions")
    assert done.returncode == 2
    assert f"{cairn_paths.journal} is not a SQLite database" in done.stderr
    assert "Traceback" not in done.stderr
    assert cairn_paths.journal.read_text() == "hello"


def test_headless_paths_never_load_qt() -> None:
    probe = (
        "import sys, pkgutil, importlib\n"
        "import host, desktop\n"
        "for pkg in (host, desktop):\n"
        "    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "from desktop.__main__ import main\n"
        "assert main(['sessions']) == 0\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'ui')))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
