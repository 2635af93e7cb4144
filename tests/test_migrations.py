"""Journals of every earlier schema, migrated forward by opening them: nothing is lost.

Each fixture is built the way a Cairn of that era left it: the journal is created with only
the migrations that era had (``MIGRATIONS[:version]``) and filled with plain SQL, as that
era's writer stored rows. Then the current Cairn opens it with every migration.

    schema 1  sessions and transcript rows
    schema 2  + request usage (every token count a number)
    schema 3  + search index, deletion with undo (a deleted session)
    schema 4  + minimum reader version; unreported usage is NULL; each request has a kind
    schema 5  + the size of each request's body
    schema 6  + indexes for the versions of messages
    schema 7  + requests stopped or failed mid-reply, with an estimate
    schema 8  + pinned and archived chats
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from host.errors import JournalWriteError
from host.ids import new_id
from host.journal import Journal
from host.paths import CairnPaths
from host.schema import MIGRATIONS, latest_version
from host.transcript import TranscriptWriter
from host.usage import UsageLedger

# Journal.latest_meta's query, which migration 9's index serves.
LATEST_META = (
    "SELECT r.model_system FROM transcript_rows AS r JOIN sessions AS s ON s.id = r.session_id "
    "WHERE s.deleted_at IS NULL AND r.role = 'system' AND r.model_system IS NOT NULL "
    "AND json_extract(r.model_system, '$.kind') = ? ORDER BY r.created_at DESC, r.id DESC LIMIT 1"
)
TOKEN_COLUMNS = ("prompt_tokens", "cached_tokens", "uncached_tokens", "output_tokens", "reasoning_tokens")


def text(words: str) -> dict[str, Any]:
    return {"parts": [{"kind": "text", "text": words}]}


def stored_json(value: object) -> str:
    """JSON as every era's writer stored it: canonical, compact, UTF-8 (``null`` included)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Era:
    version: int
    dinner: str  # a session with every kind of row
    trip: str  # a session with one visible row
    deleted: str | None  # schema 3 only: a session deleted with undo
    unknown_system_text: str  # a newer Cairn's system metadata, byte for byte


def build_era(path: Path, version: int) -> Era:
    """A journal as a Cairn of schema ``version`` left it."""
    with Journal.open(path, migrations=MIGRATIONS[:version]) as journal:
        assert journal.schema_version == version
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = ON")
    dinner, trip, deleted = new_id(), new_id(), new_id()
    sessions = [(dinner, "Dinner plans", "2026-01-02T10:00:00.000000Z"), (trip, "Trip", "2026-01-03T09:00:00.000000Z")]
    if version >= 3:
        sessions.append((deleted, "Deleted chat", "2026-01-04T09:00:00.000000Z"))
    for session_id, title, when in sessions:
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (session_id, title, when, when),
        )
    if version >= 3:
        conn.execute("UPDATE sessions SET deleted_at = '2026-01-05T00:00:00.000000Z' WHERE id = ?", (deleted,))

    unknown = '{"v":7,"section":"instructions","content":{"rich":true},"extra":"from a newer Cairn"}'
    user, answer, regenerated = new_id(), new_id(), new_id()
    rows: list[tuple[str, str, str, int, object, str | None, str | None]] = [
        # id, session, role, hidden, content, model_system (stored text), anchor
        (user, dinner, "user", 0, text("How do I cook lentils with cumin?"), None, None),
        (new_id(), dinner, "system", 1, None, stored_json({"v": 1, "section": "instructions", "content": "Be brief."}),
         user),
        (new_id(), dinner, "system", 1, None, unknown, None),
        (answer, dinner, "assistant", 0, {**text("Simmer the lentils twenty minutes."), "status": "complete"}, None,
         None),
        (new_id(), dinner, "assistant", 1, {"status": "error", "error": {"message": "zebra timeout"}}, None, None),
        (regenerated, dinner, "assistant", 0, text("Toast the cumin first, then simmer."), None, None),
        (new_id(), dinner, "system", 1, {"supersedes": [answer]}, None, None),
        (new_id(), trip, "user", 0, text("Which coast is warmer in May?"), None, None),
    ]  # fmt: skip
    if version >= 3:
        rows.append((new_id(), deleted, "user", 0, text("A question about quinoa"), None, None))
    seqs: dict[str, int] = {}
    for n, (row_id, session_id, role, hidden, content, system, anchor) in enumerate(rows):
        seqs[session_id] = seqs.get(session_id, 0) + 1
        conn.execute(
            "INSERT INTO transcript_rows (id, session_id, seq, role, hidden, content, model_system, anchor, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row_id, session_id, seqs[session_id], role, hidden, stored_json(content), system, anchor,
             f"2026-01-02T10:00:{n:02}.000000Z"),
        )  # fmt: skip

    if version >= 2:
        usage = [
            (dinner, answer, 1200, 1000, 200, 80, 0, 0.0021),
            (dinner, regenerated, 1300, 1200, 100, 90, 30, None),  # prices were unknown
            (trip, None, 50, 0, 50, 10, 0, 0.0001),
        ]
        if version >= 3:
            usage.append((deleted, None, 10, 0, 10, 5, 0, 0.00001))
        for n, (session_id, row_id, prompt, cached, uncached, output, reasoning, cost) in enumerate(usage):
            conn.execute(
                "INSERT INTO request_usage (id, session_id, row_id, account_id, provider, model, api, base_url, "
                "prompt_tokens, cached_tokens, uncached_tokens, output_tokens, reasoning_tokens, cost_usd, "
                "body_sha256, created_at) VALUES (?, ?, ?, 'acct', 'deepseek', 'deepseek-flash', "
                "'openai-completions', 'https://api.deepseek.com', ?, ?, ?, ?, ?, ?, ?, ?)",
                (new_id(), session_id, row_id, prompt, cached, uncached, output, reasoning, cost, f"{n:064x}",
                 f"2026-01-02T10:01:{n:02}.000000Z"),
            )  # fmt: skip
    conn.commit()
    conn.close()
    return Era(version, dinner, trip, deleted if version >= 3 else None, unknown)


def table(conn: sqlite3.Connection, name: str) -> list[dict[str, Any]]:
    cursor = conn.execute(f"SELECT * FROM {name} ORDER BY id")
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def snapshot(path: Path) -> dict[str, list[dict[str, Any]]]:
    conn = sqlite3.connect(path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        return {name: table(conn, name) for name in ("sessions", "transcript_rows", "request_usage") if name in names}
    finally:
        conn.close()


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6, 7, 8, 9])
def test_a_journal_of_every_earlier_schema_is_migrated_without_losing_a_row(
    cairn_paths: CairnPaths, version: int
) -> None:
    era = build_era(cairn_paths.journal, version)
    before = snapshot(cairn_paths.journal)

    with Journal.open(cairn_paths.journal) as journal:
        assert journal.schema_version == latest_version() == 10
        assert not journal.read_only
        with journal.read() as conn:
            after = {name: table(conn, name) for name in ("sessions", "transcript_rows", "request_usage")}
            meta = dict(conn.execute("SELECT key, value FROM journal_meta").fetchall())
        writer, ledger = TranscriptWriter(journal), UsageLedger(journal)

        # Every row, field by field; columns added since read as their defaults.
        assert len(after["sessions"]) == len(before["sessions"])
        for old, new in zip(before["sessions"], after["sessions"], strict=True):
            assert new == {"deleted_at": None, **old, "pinned_at": None, "archived_at": None}
        assert after["transcript_rows"] == before["transcript_rows"]
        assert len(after["request_usage"]) == len(before.get("request_usage", []))
        for old, new in zip(before.get("request_usage", []), after["request_usage"], strict=True):
            assert new == {"kind": "chat", "body_bytes": None, **old, "interrupted": 0, "estimated_tokens": None}
        assert meta == {"min_reader_version": "4"}

        # And through the API.
        rows = writer.rows(era.dinner)
        assert len(rows) == 7
        assert writer.effective_state(era.dinner) == {"instructions": "Be brief."}
        assert writer.model_order(era.dinner)[0].role == "system"  # the anchored row sits before its user row
        assert [r.content for r in writer.display_page(era.dinner)] == [
            text("How do I cook lentils with cumin?"),
            {"status": "error", "error": {"message": "zebra timeout"}},
            text("Toast the cumin first, then simmer."),
        ]
        with journal.read() as conn:
            kept = conn.execute(
                "SELECT model_system FROM transcript_rows WHERE model_system LIKE '%\"v\":7%'"
            ).fetchone()[0]
        assert kept == era.unknown_system_text
        assert {s.id for s in journal.sessions()} == {era.dinner, era.trip}
        usage = ledger.requests(era.dinner)
        if version >= 2:
            assert [u.prompt_tokens for u in usage] == [1200, 1300]
            assert all(u.reported and u.kind == "chat" for u in usage)
            t = ledger.totals(era.dinner)
            assert (t.requests, t.unreported, t.prompt_tokens, t.cached_tokens) == (2, 0, 2500, 2200)
            assert t.output_tokens == 170
            assert t.cached_share == pytest.approx(2200 / 2500)
            assert t.cost_usd is None  # one request's prices were unknown
            assert ledger.totals(era.trip).cost_usd == pytest.approx(0.0001)
        else:
            assert usage == []

        # Search finds the old text (indexed by migration 3 for eras 1 and 2), not hidden rows.
        found = journal.search_sessions("lentil")
        assert [s.id for s, _ in found] == [era.dinner]
        assert ("lentils", True) in found[0][1]
        assert [s.id for s, _ in journal.search_sessions("coast warmer")] == [era.trip]
        assert journal.search_sessions("zebra") == []
        assert journal.search_sessions("quinoa") == []  # only in the deleted session
        assert [s.id for s, _ in journal.search_sessions("t")] == [era.trip, era.dinner]
        with journal.read() as conn:  # migration 10's index, built at once for so few rows; the old one gone
            index = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'message_index'").fetchone()[0]
            old = conn.execute("SELECT name FROM sqlite_schema WHERE name LIKE 'transcript_search%'").fetchall()
        assert "prefix='1 2 3 4'" in index
        assert old == []
        with journal.read() as conn:
            plan = str(conn.execute("EXPLAIN QUERY PLAN " + LATEST_META, ("chat_route",)).fetchall())
        assert "USING INDEX transcript_rows_meta" in plan
        assert "TEMP B-TREE" not in plan

        # The migrated journal is written as usual.
        reply = writer.append_assistant(era.trip, text("The Mediterranean one."))
        ledger.record(
            session_id=era.trip, row_id=reply.id, account_id="acct", provider="p", model="m", api="a",
            base_url="http://127.0.0.1:1/v1", prompt_tokens=None, cached_tokens=None, uncached_tokens=None,
            output_tokens=None, reasoning_tokens=None, cost_usd=None, body_sha256="f" * 64,
        )  # fmt: skip
        assert ledger.totals(era.trip).unreported == 1
        assert [s.id for s, _ in journal.search_sessions("mediterranean")] == [era.trip]
        if era.deleted is not None:
            journal.restore_session(era.deleted)
            assert [s.id for s, _ in journal.search_sessions("quinoa")] == [era.deleted]
            journal.delete_session(era.deleted)
            assert journal.purge_deleted() == 1

    # One dated backup, taken before the first migration, opens as the old version with
    # every row as it was.
    backups = sorted((cairn_paths.data_dir / "backups").iterdir())
    assert [b.name.startswith(f"journal-v{version}-") and b.suffix == ".sqlite3" for b in backups] == [True]
    copy = sqlite3.connect(backups[0])
    try:
        assert copy.execute("PRAGMA user_version").fetchone()[0] == version
    finally:
        copy.close()
    assert snapshot(backups[0]) == before


def test_migration_4_rebuilds_request_usage_with_its_keys_index_and_nullable_tokens(journal: Journal) -> None:
    with journal.read() as conn:
        columns = {r[1]: r for r in conn.execute("PRAGMA table_info(request_usage)")}
        keys = {(r[2], r[3], r[4]) for r in conn.execute("PRAGMA foreign_key_list(request_usage)")}
        indexes = [r[1] for r in conn.execute("PRAGMA index_list(request_usage)") if r[3] == "c"]
        index_columns = [r[2] for r in conn.execute("PRAGMA index_info(request_usage_session)")]
        strict = conn.execute("SELECT strict FROM pragma_table_list WHERE name = 'request_usage'").fetchone()[0]
        leftovers = conn.execute("SELECT name FROM sqlite_schema WHERE name LIKE '%_v4'").fetchall()
    for name in TOKEN_COLUMNS:
        assert columns[name][3] == 0, f"{name} is still NOT NULL"  # notnull flag
    assert columns["kind"][3] == 1
    assert columns["kind"][4] == "'chat'"
    assert keys == {("sessions", "session_id", "id"), ("transcript_rows", "row_id", "id")}
    assert indexes == ["request_usage_session"]
    assert index_columns == ["session_id", "created_at"]
    assert strict == 1
    assert leftovers == []

    session = journal.create_session()
    with pytest.raises(Exception, match="FOREIGN KEY"), journal.write("a usage row for a missing row") as conn:
        conn.execute(
            "INSERT INTO request_usage (id, session_id, row_id, account_id, provider, model, api, base_url, "
            "body_sha256, created_at) VALUES (?, ?, ?, 'a', 'p', 'm', 'api', 'u', 'h', 't')",
            (new_id(), session.id, new_id()),
        )
    with pytest.raises(Exception, match="CHECK"), journal.write("negative tokens") as conn:
        conn.execute(
            "INSERT INTO request_usage (id, session_id, account_id, provider, model, api, base_url, "
            "prompt_tokens, body_sha256, created_at) VALUES (?, ?, 'a', 'p', 'm', 'api', 'u', -1, 'h', 't')",
            (new_id(), session.id),
        )


def test_a_new_journal_records_its_minimum_reader_version_and_takes_no_backup(cairn_paths: CairnPaths) -> None:
    with Journal.open(cairn_paths.journal) as journal, journal.read() as conn:
        assert conn.execute("SELECT value FROM journal_meta WHERE key = 'min_reader_version'").fetchone() == ("4",)
    assert not (cairn_paths.data_dir / "backups").exists()


def test_migration_8_pins_and_archives_and_an_older_cairn_still_writes_the_journal(cairn_paths: CairnPaths) -> None:
    era = build_era(cairn_paths.journal, 7)
    with Journal.open(cairn_paths.journal) as journal:
        journal.pin_session(era.trip, True)
        journal.archive_session(era.dinner, True)
        listed = {s.id: s for s in journal.sessions()}
        assert listed[era.trip].pinned_at is not None
        assert listed[era.trip].archived_at is None
        assert listed[era.dinner].archived_at is not None  # archived chats are still listed, marked
        updated = listed[era.trip].updated_at
    # A Cairn that knows only schema 7 opens it writable (the minimum reader stayed 4) and
    # lists both chats; its rename leaves the pin alone.
    with Journal.open(cairn_paths.journal, migrations=MIGRATIONS[:7]) as older:
        assert not older.read_only
        older.rename_session(era.trip, "Trip, renamed by an older Cairn")
    with Journal.open(cairn_paths.journal) as journal:
        trip = journal.session(era.trip)
        assert trip is not None
        assert trip.title == "Trip, renamed by an older Cairn"
        assert trip.pinned_at is not None
        assert trip.updated_at == updated
        journal.archive_session(era.trip, True)  # archiving unpins
        journal.archive_session(era.dinner, False)
        listed = {s.id: s for s in journal.sessions()}
        assert (listed[era.trip].pinned_at, listed[era.trip].archived_at is not None) == (None, True)
        assert listed[era.dinner].archived_at is None
        journal.delete_session(era.dinner)
        with pytest.raises(JournalWriteError, match="may have been deleted"):
            journal.pin_session(era.dinner, True)


def test_a_title_is_replaced_only_while_it_is_the_one_expected(journal: Journal) -> None:
    record = journal.create_session("How do I cook lentils?")
    assert journal.replace_title(record.id, "How do I cook lentils?", "Cooking lentils")
    assert not journal.replace_title(record.id, "How do I cook lentils?", "Something else")
    journal.rename_session(record.id, "My lentils")
    assert not journal.replace_title(record.id, "Cooking lentils", "Lentil soup")
    assert journal.session(record.id) == record.model_copy(update={"title": "My lentils"})
