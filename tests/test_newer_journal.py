"""A journal from a future Cairn (``tests/future_journal.py`` makes one): used as far as its
minimum reader version allows."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.loopback import LoopbackProvider
from desktop.settings.store import Account, SettingsStore
from host.errors import JournalReadOnlyError
from host.journal import Journal
from host.paths import CairnPaths
from host.schema import latest_version
from host.transcript import TranscriptWriter
from host.usage import UsageLedger
from tests.future_journal import FUTURE, Future, digest, future_migrations, make_future_journal, usage_values

REPO = Path(__file__).resolve().parents[1]


def raw_user_version(path: Path) -> int:
    conn = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def test_a_newer_journal_whose_minimum_reader_is_this_cairn_opens_read_write(cairn_paths: CairnPaths) -> None:
    future = make_future_journal(cairn_paths.journal, min_reader=latest_version())
    backups = sorted((cairn_paths.data_dir / "backups").iterdir())

    with Journal.open(cairn_paths.journal) as journal:
        assert not journal.read_only
        assert journal.read_only_reason is None
        assert journal.schema_version == FUTURE  # not migrated, not touched
        writer = TranscriptWriter(journal)
        writer.append_user(future.session, "written by the older Cairn")
        UsageLedger(journal).record(**usage_values(future.session, None, None))
        assert [r.seq for r in writer.rows(future.session)] == [1, 2, 3, 4]
        with journal.read() as conn:
            assert conn.execute("SELECT note FROM bookmarks").fetchall() == [("nice",)]
            assert conn.execute("SELECT value FROM journal_meta").fetchall() == [(str(latest_version()),)]
            assert conn.execute("PRAGMA query_only").fetchone()[0] == 0
    assert sorted((cairn_paths.data_dir / "backups").iterdir()) == backups  # no backup: nothing migrated

    # The newer Cairn reads what the older one wrote.
    with Journal.open(cairn_paths.journal, migrations=future_migrations(latest_version())) as journal:
        assert TranscriptWriter(journal).rows(future.session)[-1].content == "written by the older Cairn"


def read_only_writes(journal: Journal, future: Future) -> dict[str, Callable[[], object]]:
    """Every way the journal can be written to."""
    writer, ledger = TranscriptWriter(journal), UsageLedger(journal)
    return {
        "a new session": lambda: journal.create_session("new"),
        "the session's new title": lambda: journal.rename_session(future.session, "renamed"),
        "the session's deletion": lambda: journal.delete_session(future.session),
        "the session's restoration": lambda: journal.restore_session(future.session),
        "the removal of deleted sessions": journal.purge_deleted,
        "a user row": lambda: writer.append_user(future.session, "hello"),
        "an assistant row": lambda: writer.append_assistant(future.session, "hello"),
        "a tool row": lambda: writer.append_tool_result(future.session, {"output": "x"}),
        "a system row": lambda: writer.append_system(future.session, "instructions", "changed"),
        "a supersede marker": lambda: writer.append_supersede(future.session, [future.reply_row]),
        "the usage of a chat request": lambda: ledger.record(**usage_values(future.session, None, None)),
        "a raw write": lambda: journal.write("anything").__enter__(),
    }


def test_a_newer_journal_that_needs_a_newer_cairn_opens_read_only_and_is_left_unchanged(
    cairn_paths: CairnPaths,
) -> None:
    future = make_future_journal(cairn_paths.journal, min_reader=FUTURE)
    path = cairn_paths.journal
    before, backups = digest(path), sorted((cairn_paths.data_dir / "backups").iterdir())

    with Journal.open(path) as journal:
        assert journal.read_only
        assert journal.read_only_reason == (
            f"The journal {path} was written by a newer Cairn (schema {FUTURE}, which needs schema {FUTURE} or "
            f"newer to change it; this Cairn knows up to {latest_version()}), so it is open read-only; update "
            "Cairn to keep chatting."
        )
        assert journal.schema_version == FUTURE

        # Reads work.
        writer, ledger = TranscriptWriter(journal), UsageLedger(journal)
        assert [s.title for s in journal.sessions()] == ["Written by a newer Cairn"]
        assert journal.session(future.session) is not None
        assert [r.role for r in writer.rows(future.session)] == ["user", "system", "assistant"]
        assert writer.model_order(future.session)[0].role == "system"
        assert writer.effective_state(future.session) == {"instructions": "Be brief."}
        assert [r.id for r in writer.display_page(future.session)] == [future.user_row, future.reply_row]
        found = journal.search_sessions("basalt")
        assert [s.id for s, _ in found] == [future.session]
        assert ("basalt", True) in found[0][1]
        assert [(u.kind, u.reported) for u in ledger.requests(future.session)] == [("chat", True), ("title", False)]
        totals = ledger.totals(future.session)
        assert (totals.requests, totals.unreported, totals.prompt_tokens, totals.cost_usd) == (2, 1, 100, None)
        assert set(ledger.totals_by_kind(future.session)) == {"chat", "title"}

        # Every write is refused, with a message that names the file and says what to do.
        for what, attempt in read_only_writes(journal, future).items():
            with pytest.raises(JournalReadOnlyError) as caught:
                attempt()
            message = str(caught.value)
            assert message.startswith("Cairn cannot save "), message
            assert f": the journal {path} is open read-only because a newer Cairn wrote it" in message, what
            assert f"(schema {FUTURE}, which needs schema {FUTURE} or newer" in message
            assert message.endswith("update Cairn to keep chatting.")
            assert caught.value.path == path

        # Defence in depth: even SQL that goes around ``write`` cannot change the file.
        with journal.read() as conn:
            assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                conn.execute("DELETE FROM transcript_rows")
            conn.execute("PRAGMA query_only = OFF")
            with pytest.raises(sqlite3.OperationalError, match="readonly"):
                conn.execute("DELETE FROM transcript_rows")

    assert digest(path) == before
    assert raw_user_version(path) == FUTURE
    assert sorted((cairn_paths.data_dir / "backups").iterdir()) == backups

    # The newer Cairn carries on where it left off.
    with Journal.open(path, migrations=future_migrations(FUTURE)) as journal:
        assert not journal.read_only
        TranscriptWriter(journal).append_user(future.session, "back on the newer Cairn")
        with journal.read() as conn:
            assert conn.execute("SELECT count(*) FROM bookmarks").fetchone()[0] == 1


@pytest.mark.parametrize(
    "damage",
    ["DELETE FROM journal_meta", "UPDATE journal_meta SET value = 'soon'", "UPDATE journal_meta SET value = '0'"],
    ids=["missing", "not-a-number", "zero"],
)
def test_a_newer_journal_whose_minimum_reader_cannot_be_read_opens_read_only(
    cairn_paths: CairnPaths, damage: str
) -> None:
    make_future_journal(cairn_paths.journal, min_reader=latest_version())
    conn = sqlite3.connect(cairn_paths.journal)
    conn.execute(damage)
    conn.commit()
    conn.close()
    before = digest(cairn_paths.journal)
    with Journal.open(cairn_paths.journal) as journal:
        assert journal.read_only
        assert "no record of which older Cairns may change it" in (journal.read_only_reason or "")
        with pytest.raises(JournalReadOnlyError):
            journal.create_session()
    assert digest(cairn_paths.journal) == before


def test_read_only_opening_sees_commits_a_crashed_newer_cairn_left_in_the_wal(cairn_paths: CairnPaths) -> None:
    future = make_future_journal(cairn_paths.journal, min_reader=FUTURE)
    newer = sqlite3.connect(cairn_paths.journal, isolation_level=None)
    newer.execute("PRAGMA wal_autocheckpoint = 0")
    newer.execute("UPDATE sessions SET title = 'renamed just before the crash'")
    # A copy taken now is what a SIGKILL leaves: the last commit only in the -wal file.
    crashed = cairn_paths.data_dir.parent / "crashed" / cairn_paths.journal.name
    crashed.parent.mkdir()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{cairn_paths.journal}{suffix}", f"{crashed}{suffix}")
    newer.close()
    before = digest(crashed)
    with Journal.open(crashed) as journal:
        assert journal.read_only
        assert [s.title for s in journal.sessions()] == ["renamed just before the crash"]
        assert journal.session(future.session) is not None
    assert digest(crashed) == before  # nothing was copied back into the database file


def test_the_cli_reads_a_read_only_journal_and_refuses_to_chat_with_a_clear_message(cairn_paths: CairnPaths) -> None:
    future = make_future_journal(cairn_paths.journal, min_reader=FUTURE)
    before = digest(cairn_paths.journal)

    def cairn(*args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "CAIRN_API_KEY": "sk-test"}
        return subprocess.run(
            [sys.executable, "-m", "desktop", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
            check=False,
        )  # fmt: skip

    listed = cairn("sessions")
    assert listed.returncode == 0, listed.stderr
    assert "Written by a newer Cairn" in listed.stdout
    with LoopbackProvider() as provider:
        account = Account(name="Loop", provider="custom", base_url=provider.base_url, default_model="loopback-chat")
        SettingsStore(cairn_paths.config_dir / "settings.json").add_account(account)
        for args in (("chat", "hello"), ("chat", "--session", future.session, "hello")):
            done = cairn(*args)
            assert done.returncode == 2, done.stderr
            assert "is open read-only because a newer Cairn wrote it" in done.stderr
            assert str(cairn_paths.journal) in done.stderr
            assert "update Cairn to keep chatting" in done.stderr
            assert "Traceback" not in done.stderr
        assert provider.requests == []  # nothing was sent
    assert digest(cairn_paths.journal) == before
