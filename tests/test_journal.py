import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from host.errors import JournalLockedError, JournalReadOnlyError, JournalWriteError, NotAJournalError
from host.ids import new_id
from host.journal import Journal
from host.paths import CairnPaths
from host.schema import MIGRATIONS, Migration, latest_version
from host.transcript import TranscriptWriter
from host.usage import UsageLedger

REPO = Path(__file__).resolve().parents[1]


def test_a_new_journal_is_created_under_cairn_home(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        assert journal.path == cairn_paths.journal
        assert journal.schema_version == latest_version()
        with journal.read() as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
            assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_sessions_are_listed_most_recent_first(journal: Journal) -> None:
    first = journal.create_session("first")
    second = journal.create_session("second")
    assert [s.id for s in journal.sessions()] == [second.id, first.id]
    TranscriptWriter(journal).append_user(first.id, {"text": "hello again"})
    assert [s.title for s in journal.sessions()] == ["first", "second"]
    assert journal.session(first.id) is not None
    assert journal.session("missing") is None


def test_reopening_keeps_everything(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        session = journal.create_session("kept")
        TranscriptWriter(journal).append_user(session.id, "hello")
    with Journal.open(cairn_paths.journal) as journal:
        assert [s.title for s in journal.sessions()] == ["kept"]
        assert [r.content for r in TranscriptWriter(journal).rows(session.id)] == ["hello"]
    assert not (cairn_paths.data_dir / "backups").exists()


@pytest.mark.parametrize(
    "payload",
    [b"these are my notes, not a database\n" * 100, bytes(range(256)) * 64],
    ids=["text", "binary"],
)
def test_a_file_that_is_not_sqlite_is_refused_and_untouched(cairn_paths: CairnPaths, payload: bytes) -> None:
    cairn_paths.data_dir.mkdir(parents=True)
    cairn_paths.journal.write_bytes(payload)
    with pytest.raises(NotAJournalError) as caught:
        Journal.open(cairn_paths.journal)
    message = str(caught.value)
    assert str(cairn_paths.journal) in message
    assert "move it aside" in message
    assert cairn_paths.journal.read_bytes() == payload
    assert not Path(str(cairn_paths.journal) + "-wal").exists()


def test_a_corrupt_sqlite_file_is_refused_and_untouched(cairn_paths: CairnPaths) -> None:
    cairn_paths.data_dir.mkdir(parents=True)
    payload = b"SQLite format 3\x00" + b"\xff" * 4000
    cairn_paths.journal.write_bytes(payload)
    with pytest.raises(NotAJournalError, match="cannot be read as a SQLite database"):
        Journal.open(cairn_paths.journal)
    assert cairn_paths.journal.read_bytes() == payload


def test_another_programs_database_is_refused_and_untouched(cairn_paths: CairnPaths) -> None:
    cairn_paths.data_dir.mkdir(parents=True)
    other = sqlite3.connect(cairn_paths.journal)
    other.execute("CREATE TABLE recipes (name TEXT)")
    other.commit()
    other.close()
    before = cairn_paths.journal.read_bytes()
    with pytest.raises(NotAJournalError, match="not a Cairn journal"):
        Journal.open(cairn_paths.journal)
    assert cairn_paths.journal.read_bytes() == before


def test_a_newer_journal_that_records_no_minimum_reader_opens_read_only_and_untouched(
    cairn_paths: CairnPaths,
) -> None:
    # A newer Cairn that (against the rules) dropped the record: this Cairn cannot know
    # whether it may write, so it does not. tests/test_newer_journal.py covers the rest.
    with Journal.open(cairn_paths.journal) as journal:
        journal.create_session("from the future")
        with journal.write("a newer schema") as conn:
            conn.execute("CREATE TABLE future_things (x TEXT) STRICT")
            conn.execute("DROP TABLE journal_meta")
            conn.execute(f"PRAGMA user_version = {latest_version() + 5}")
    before = cairn_paths.journal.read_bytes()
    with Journal.open(cairn_paths.journal) as journal:
        assert journal.read_only
        reason = journal.read_only_reason or ""
        assert str(cairn_paths.journal) in reason
        assert f"schema {latest_version() + 5}" in reason
        assert "no record of which older Cairns may change it" in reason
        assert "update Cairn" in reason
        assert [s.title for s in journal.sessions()] == ["from the future"]
        with pytest.raises(JournalReadOnlyError, match="open read-only"):
            journal.create_session("not saved")
    assert cairn_paths.journal.read_bytes() == before


def test_a_journal_held_by_another_cairn_is_refused(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        journal.create_session("mine")
    holder = subprocess.Popen(
        [sys.executable, "-m", "tests.journal_holder", str(cairn_paths.journal)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(JournalLockedError) as caught:
            Journal.open(cairn_paths.journal)
        assert caught.value.holder_pid == holder.pid
        assert f"process {holder.pid}" in str(caught.value)
        assert "Close that Cairn" in str(caught.value)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    with Journal.open(cairn_paths.journal) as journal:
        assert [s.title for s in journal.sessions()] == ["mine"]


def test_one_process_cannot_open_the_journal_twice(journal: Journal) -> None:
    with pytest.raises(JournalLockedError):
        Journal.open(journal.path)


def test_migrating_takes_a_dated_backup_first_and_keeps_data(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        session = journal.create_session("before the migration")
        TranscriptWriter(journal).append_user(session.id, "keep me")
    newer = (
        *MIGRATIONS,
        Migration(
            version=latest_version() + 1,
            description="a test table",
            statements=("CREATE TABLE bookmarks (row_id TEXT REFERENCES transcript_rows(id)) STRICT",),
        ),
    )
    with Journal.open(cairn_paths.journal, migrations=newer) as journal:
        assert journal.schema_version == latest_version() + 1
        assert [r.content for r in TranscriptWriter(journal).rows(session.id)] == ["keep me"]
    backups = list((cairn_paths.data_dir / "backups").iterdir())
    assert len(backups) == 1
    assert backups[0].name.startswith(f"journal-v{latest_version()}-")
    copy = sqlite3.connect(backups[0])
    try:
        assert copy.execute("PRAGMA user_version").fetchone()[0] == latest_version()
        assert copy.execute("SELECT title FROM sessions").fetchall() == [("before the migration",)]
    finally:
        copy.close()
    # The current code now meets a journal one version ahead of it. The test migration kept
    # the minimum reader version (a new table an older Cairn ignores), so it may write.
    with Journal.open(cairn_paths.journal) as journal:
        assert not journal.read_only
        assert journal.read_only_reason is None
        TranscriptWriter(journal).append_user(session.id, "written by the older Cairn")
        assert journal.schema_version == latest_version() + 1
    assert len(list((cairn_paths.data_dir / "backups").iterdir())) == 1


def test_a_failed_migration_leaves_the_old_schema(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal:
        journal.create_session("survivor")
    broken = (
        *MIGRATIONS,
        Migration(version=latest_version() + 1, description="broken", statements=("CREATE TABLE x (", "")),
    )
    with pytest.raises(Exception, match="schema migration"):
        Journal.open(cairn_paths.journal, migrations=broken)
    with Journal.open(cairn_paths.journal) as journal:
        assert journal.schema_version == latest_version()
        assert [s.title for s in journal.sessions()] == ["survivor"]


def test_sessions_are_renamed_deleted_restored_and_purged(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    keep, doomed = journal.create_session("keep"), journal.create_session("doomed")
    user = writer.append_user(doomed.id, {"parts": [{"kind": "text", "text": "bye"}]})
    writer.append_system(doomed.id, "instructions", "x", anchor=user.id)
    journal.rename_session(keep.id, "  kept  ")
    assert journal.session(keep.id).title == "kept"
    journal.delete_session(doomed.id)
    assert [s.title for s in journal.sessions()] == ["kept"]
    assert journal.session(doomed.id) is None
    with pytest.raises(JournalWriteError, match="may have been deleted"):
        writer.append_user(doomed.id, "still there?")
    with pytest.raises(JournalWriteError, match="may have been deleted"):
        journal.rename_session(doomed.id, "new")
    journal.restore_session(doomed.id)
    assert {s.title for s in journal.sessions()} == {"kept", "doomed"}
    journal.delete_session(doomed.id)
    assert journal.purge_deleted() == 1
    journal.restore_session(doomed.id)  # nothing left to restore
    assert [s.title for s in journal.sessions()] == ["kept"]
    assert writer.rows(doomed.id) == []


def test_search_finds_titles_and_message_text_but_not_hidden_rows(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    trip = journal.create_session("Trip to the coast")
    food = journal.create_session("Dinner")
    writer.append_user(food.id, {"parts": [{"kind": "text", "text": "How do I cook lentils with cumin?"}]})
    writer.append_system(food.id, "instructions", "secret coastal instructions")
    writer.append(food.id, "assistant", {"error": {"message": "zebra failure"}}, hidden=True)
    assert [s.title for s, _ in journal.search_sessions("coast")] == ["Trip to the coast"]
    found = journal.search_sessions("lentil cum")
    assert [s.id for s, _ in found] == [food.id]
    assert ("lentils", True) in found[0][1]  # the word that matched, marked
    assert journal.search_sessions("zebra") == []
    assert journal.search_sessions('100% "quoted" (weird) AND OR -') == []
    assert {s.id for s, _ in journal.search_sessions("  ")} == {trip.id, food.id}
    journal.delete_session(food.id)
    assert journal.search_sessions("lentils") == []


def test_a_chat_opened_from_a_search_is_found_at_its_newest_matching_message(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    soup, other = journal.create_session("Soup"), journal.create_session("Other")
    say = lambda s, text: writer.append_user(s.id, {"parts": [{"kind": "text", "text": text}]})  # noqa: E731
    older = say(soup, "lentil soup")
    newer = say(soup, "more lentils, please")
    say(soup, "thanks")
    say(other, "lentil stew")  # newer still, but another chat's
    writer.append(soup.id, "assistant", {"error": {"message": "lentil failure"}}, hidden=True)  # not indexed
    assert journal.newest_match(soup.id, "lentil") == newer.id
    assert journal.newest_match(soup.id, "lentil soup") == older.id
    assert journal.newest_match(soup.id, "stew") is None
    assert journal.newest_match(soup.id, "   ") is None
    assert writer.seq_of(soup.id, older.id) == older.seq
    assert writer.seq_of(other.id, older.id) is None  # a row of another chat is not this chat's


def test_display_pages_skip_system_rows_and_cost_the_same_however_long(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    session = journal.create_session()
    for n in range(30):
        u = writer.append_user(session.id, {"parts": [{"kind": "text", "text": f"q{n}"}]})
        writer.append_system(session.id, "instructions", f"v{n}", anchor=u.id)
        writer.append_assistant(session.id, {"parts": [{"kind": "text", "text": f"a{n}"}]})
    last = writer.display_page(session.id, limit=4)
    assert [r.content["parts"][0]["text"] for r in last] == ["q28", "a28", "q29", "a29"]
    older = writer.display_page(session.id, before_seq=last[0].seq, limit=3)
    assert [r.content["parts"][0]["text"] for r in older] == ["a26", "q27", "a27"]


def test_a_page_is_never_cut_short_by_rows_set_aside_and_pages_read_both_ways(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    session = journal.create_session()
    rows = [writer.append_user(session.id, {"parts": [{"kind": "text", "text": f"m{n}"}]}) for n in range(12)]
    writer.append_supersede(session.id, [r.id for r in rows[4:9]])  # an edit set five aside
    texts = lambda found: [r.content["parts"][0]["text"] for r in found]  # noqa: E731
    older, first = writer.display_range(session.id, before_seq=rows[10].seq, limit=3)
    assert (texts(older), first) == (["m2", "m3", "m9"], False)  # past the five, not "nothing before"
    oldest, first = writer.display_range(session.id, before_seq=rows[2].seq, limit=3)
    assert (texts(oldest), first) == (["m0", "m1"], True)
    newer, last = writer.display_range(session.id, after_seq=rows[2].seq, limit=3)
    assert (texts(newer), last) == (["m3", "m9", "m10"], False)
    newest, last = writer.display_range(session.id, after_seq=rows[9].seq, limit=3)
    assert (texts(newest), last) == (["m10", "m11"], True)
    exactly, _ = writer.display_range(session.id, after_seq=rows[8].seq, limit=3)  # a full page may have more
    assert texts(exactly) == ["m9", "m10", "m11"]
    assert writer.display_range(session.id, after_seq=rows[11].seq, limit=3) == ([], True)


# -- write transactions --------------------------------------------------------------


def _committed_rows(path: Path) -> int:
    """Rows another connection sees: only what has been committed."""
    other = sqlite3.connect(path.as_uri() + "?mode=ro", uri=True)
    try:
        return int(other.execute("SELECT count(*) FROM transcript_rows").fetchone()[0])
    finally:
        other.close()


def _usage(session_id: str, row_id: str | None) -> dict[str, Any]:
    return {
        "session_id": session_id, "row_id": row_id, "account_id": "acct", "provider": "p", "model": "m",
        "api": "openai-completions", "base_url": "http://127.0.0.1:1/v1", "prompt_tokens": 10,
        "cached_tokens": 4, "uncached_tokens": 6, "output_tokens": 3, "reasoning_tokens": 0,
        "cost_usd": 0.5, "body_sha256": "0" * 64,
    }  # fmt: skip


def test_nested_writes_commit_together_when_the_outer_write_returns(journal: Journal) -> None:
    writer, ledger = TranscriptWriter(journal), UsageLedger(journal)
    session = journal.create_session()
    with journal.write("a reply and its usage"):
        row = writer.append_assistant(session.id, {"text": "answer"})
        ledger.record(**_usage(session.id, row.id))
        assert _committed_rows(journal.path) == 0  # the inner writes did not commit on their own
        assert [r.id for r in writer.rows(session.id)] == [row.id]  # but the writer sees them
    assert _committed_rows(journal.path) == 1
    assert [u.row_id for u in ledger.requests(session.id)] == [row.id]


def test_a_failure_in_the_second_nested_write_rolls_back_the_first(journal: Journal) -> None:
    writer, ledger = TranscriptWriter(journal), UsageLedger(journal)
    session = journal.create_session()
    writer.append_user(session.id, "question")
    reply_id = new_id()

    def reply_and_usage() -> None:
        with journal.write("a reply and its usage"):
            writer.append_assistant(session.id, {"text": "answer"}, row_id=reply_id)
            # A usage row for a session that does not exist breaks its foreign key.
            ledger.record(**_usage(new_id(), reply_id))

    with pytest.raises(JournalWriteError, match="usage of a chat request") as caught:
        reply_and_usage()
    assert "FOREIGN KEY" in str(caught.value)
    assert [r.content for r in writer.rows(session.id)] == ["question"]
    assert ledger.requests(session.id) == []
    # Nothing is left half done: the same id can be written again, at the next seq.
    again = writer.append_assistant(session.id, {"text": "answer"}, row_id=reply_id)
    assert again.seq == 2


def test_any_exception_in_the_outer_write_rolls_back_every_nested_write(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    session = journal.create_session()

    def two_rows_then_a_crash() -> None:
        with journal.write("two rows"):
            writer.append_user(session.id, "one")
            writer.append_assistant(session.id, "two")
            raise RuntimeError("stream broke")

    with pytest.raises(RuntimeError, match="stream broke"):
        two_rows_then_a_crash()
    assert writer.rows(session.id) == []
    assert writer.append_user(session.id, "after").seq == 1


def test_a_nested_write_that_fails_and_is_handled_undoes_only_its_own_changes(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    session = journal.create_session()

    def broken_extra() -> None:
        with journal.write("a broken extra") as conn:
            conn.execute("UPDATE sessions SET title = 'half done' WHERE id = ?", (session.id,))
            conn.execute("INSERT INTO no_such_table VALUES (1)")

    with journal.write("rows and a broken extra"):
        kept = writer.append_user(session.id, "kept")
        with pytest.raises(JournalWriteError, match="a broken extra"):
            broken_extra()
        also = writer.append_assistant(session.id, "also kept")
    assert [r.id for r in writer.rows(session.id)] == [kept.id, also.id]
    assert journal.session(session.id).title == ""


def test_a_nested_write_never_commits_on_its_own_once_the_outer_transaction_is_gone(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    session = journal.create_session()

    def outer() -> None:
        with journal.write("rows after a lost transaction") as conn:
            writer.append_user(session.id, "lost")
            conn.execute("ROLLBACK")  # as SQLite does itself on some errors (a full disk, an I/O error)
            writer.append_assistant(session.id, "must not be saved on its own")

    with pytest.raises(JournalWriteError, match="earlier failure already rolled back") as caught:
        outer()
    assert "rows after a lost transaction" not in str(caught.value)  # the nested write refused first
    assert writer.rows(session.id) == []
    assert writer.append_user(session.id, "after").seq == 1


def test_a_write_error_says_what_where_and_why_without_guessing_what_was_sent(journal: Journal) -> None:
    with pytest.raises(JournalWriteError) as caught, journal.write("a test record") as conn:
        conn.execute("INSERT INTO no_such_table VALUES (1)")
    message = str(caught.value)
    assert message.startswith(f"Cairn could not save a test record to its journal {journal.path}: ")
    assert "no such table: no_such_table" in message
    assert "Check free disk space and the file's permissions" in message
    assert "sent" not in message
    assert not isinstance(caught.value, JournalReadOnlyError)
