"""Everything Cairn writes is owner-only: folders 0700, files 0600, whatever the umask."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from desktop.logs import configure_logging
from desktop.settings.store import Account, SettingsStore
from host.journal import Journal
from host.paths import CairnPaths
from host.schema import MIGRATIONS
from host.transcript import TranscriptWriter


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_the_journal_its_side_files_backups_lock_logs_and_settings_are_private(cairn_paths: CairnPaths) -> None:
    old = os.umask(0o022)  # a common default, which would leave files readable by everyone
    try:
        with Journal.open(cairn_paths.journal, migrations=MIGRATIONS[:2]) as journal:
            journal.create_session("v2")
        with Journal.open(cairn_paths.journal) as journal:  # migrates: takes a backup
            session = journal.create_session("private")
            TranscriptWriter(journal).append_user(session.id, {"parts": [{"kind": "text", "text": "hi"}]})
            side_files = [p for p in cairn_paths.data_dir.iterdir() if p.name.startswith("journal.sqlite3-")]
            assert {p.name for p in side_files} == {"journal.sqlite3-wal", "journal.sqlite3-shm"}
            assert all(mode(p) == 0o600 for p in side_files)
        configure_logging(cairn_paths.log_dir)
        logging.getLogger("cairn.test").warning("a line in the log")
        SettingsStore(cairn_paths.config_dir / "settings.json").add_account(
            Account(name="A", provider="deepseek", default_model="deepseek-flash")
        )
    finally:
        os.umask(old)
        root = logging.getLogger()
        for handler in list(root.handlers):
            if getattr(handler, "baseFilename", "").startswith(str(cairn_paths.log_dir)):
                root.removeHandler(handler)
                handler.close()
    home = Path(os.environ["CAIRN_HOME"])
    made = list(home.rglob("*"))
    assert any(p.parent.name == "backups" for p in made)
    assert (cairn_paths.log_dir / "cairn.log").exists()
    loose = {str(p.relative_to(home)): oct(mode(p)) for p in made if mode(p) != (0o700 if p.is_dir() else 0o600)}
    assert loose == {}
    assert mode(home) == 0o700
