"""Search that finds every matching chat: one row per chat, pages that reach every match,
prefixes of any length, tool results, and the index an older journal gets in the background
(``host.journal_search``, ``host.search_index``)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop.root import Root
from desktop.search_build import MOST_SEGMENTS
from desktop.settings.secrets import SecretStore
from host import journal_search
from host.canonical import canonical_json_bytes
from host.ids import new_id
from host.journal import Journal, SearchResults
from host.journal_search import search
from host.paths import CairnPaths
from host.schema import MIGRATIONS
from host.search_index import BATCH_ROWS, pending, segments
from host.transcript import TranscriptWriter
from tests.fake_keyring import MemoryKeyring

_COLUMNS = "id, session_id, seq, role, hidden, content, model_system, anchor, created_at"
_START = datetime(2024, 1, 1, tzinfo=UTC)


def stamp(minutes: int) -> str:
    return (_START + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def content(text: str, *, tool: bool = False) -> str:
    part = {"kind": "tool_result", "call_id": "c1", "content": text} if tool else {"kind": "text", "text": text}
    return canonical_json_bytes({"parts": [part]}).decode()


def add_chat(conn: sqlite3.Connection, title: str, texts: list[str], minute: int, *, role: str = "user") -> str:
    """A chat of ``texts`` written as the generator of the lifetime journal writes one: one
    statement for all its rows, indexed by the journal's own triggers."""
    session = new_id()
    conn.execute(
        "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
        (session, title, stamp(minute), stamp(minute + len(texts))),
    )
    rows = [
        (new_id(), session, seq, role, 0, content(text), None, None, stamp(minute + seq))
        for seq, text in enumerate(texts, 1)
    ]
    conn.executemany(f"INSERT INTO transcript_rows ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return session


def every_page(journal: Journal, query: str, limit: int = 50) -> list[SearchResults]:
    pages = [journal.search_page(query, limit)]
    while pages[-1].after is not None:
        pages.append(journal.search_page(query, limit, after=pages[-1].after))
    return pages


@pytest.mark.parametrize(
    ("slice_", "slice_rows", "per_chat"),
    [
        (journal_search.SLICE, journal_search.SLICE_ROWS, journal_search.PER_CHAT),
        (10**9, 10**9, 10**9),
        (1, 50, 10**9),
    ],
    ids=["as-shipped", "probing-alone", "the-walk-stuck-in-the-big-chat-and-probing"],
)
def test_a_huge_chat_full_of_a_word_does_not_hide_the_chats_that_hold_it_once(
    journal: Journal, monkeypatch: pytest.MonkeyPatch, slice_: int, slice_rows: int, per_chat: int
) -> None:
    # The case: one chat of 25,000 messages that all hold the word, the newest, and
    # 100 older chats that each hold it once. The old search spent its row cap inside the
    # big chat and returned 1 chat of 101, saying nothing of the rest. Whichever way the
    # search goes (the walk alone, or probing chat by chat), the answer is the same.
    monkeypatch.setattr(journal_search, "SLICE", slice_)
    monkeypatch.setattr(journal_search, "SLICE_ROWS", slice_rows)
    monkeypatch.setattr(journal_search, "PER_CHAT", per_chat)
    with journal.write("chats") as conn:
        # The big chat is the first one made (the walk meets it first) and the last one active.
        big = add_chat(conn, "Quarry log", [f"granite block {n}" for n in range(25_000)], 5_000)
        older = [add_chat(conn, f"Chat {n}", ["talk of granite", "and other things"], n * 10) for n in range(100)]
    pages = every_page(journal, "granite")
    found = [record.id for page in pages for record, _ in page.found]
    assert found == [big, *reversed(older)]  # one row per chat, the most recently active first
    assert [len(page.found) for page in pages] == [50, 50, 1]
    assert not any(page.stopped_early for page in pages)
    first = pages[0].found
    assert ("granite", True) in first[0][1]
    assert "24999" in "".join(t for t, _ in first[0][1])
    assert [s.id for s, _ in journal.search_sessions("granite", limit=3)] == [big, older[-1], older[-2]]
    assert journal.newest_match(older[0], "granite") is not None
    assert journal.newest_match(older[0], "quarry") is None


def test_prefixes_of_every_length_find_the_words_they_start(journal: Journal) -> None:
    with journal.write("chats") as conn:
        stone = add_chat(conn, "A", ["the cobblestones were wet", "nothing"], 0)
        other = add_chat(conn, "B", ["a cobbler mended shoes"], 100)
        rock = add_chat(conn, "C", ["Cobblestones again, and a café"], 200)
    for query, expected in [
        ("c", [rock, other, stone]),
        ("co", [rock, other, stone]),
        ("cob", [rock, other, stone]),
        ("cobb", [rock, other, stone]),
        ("cobbl", [rock, other, stone]),  # five letters and up: the words of the index it starts
        ("cobble", [rock, other, stone]),
        ("cobbles", [rock, stone]),
        ("COBBLESTONES wet", [stone]),
        ("cobblestonesx", []),
        ("cafe", [rock]),  # diacritics folded as the index folds them
        ("wet cobb", [stone]),
        ('cobble" OR "x', []),  # quotes and operators are text, never FTS5 syntax
        ("-", []),
    ]:
        assert [s.id for s, _ in journal.search_sessions(query)] == expected, query


def test_a_prefix_of_many_words_still_finds_them(journal: Journal) -> None:
    # More words start "stone" than a prefix is expanded to: FTS5 merges them itself.
    words = [f"stone{chr(97 + a)}{chr(97 + b)}" for a in range(10) for b in range(10)]
    with journal.write("chats") as conn:
        chats = [add_chat(conn, f"Chat {n}", [word], n * 10) for n, word in enumerate(words)]
    pages = every_page(journal, "stone")
    assert [r.id for page in pages for r, _ in page.found] == chats[::-1]
    assert [r.id for r, _ in journal.search_sessions("stonej")] == chats[::-1][:10]


def test_tool_results_are_searched_and_hidden_rows_and_reasoning_are_not(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    chat = journal.create_session("Logs")
    writer.append_user(chat.id, {"parts": [{"kind": "text", "text": "read the build log"}]})
    reply = {
        "parts": [
            {"kind": "reasoning", "text": "thinking about zucchini", "model": "m/x"},
            {"kind": "tool_call", "call_id": "c1", "name": "read_file", "arguments": {"text": "quartzite"}},
        ],
        "status": "complete",
    }
    writer.append_assistant(chat.id, reply)
    writer.append_tool_result(
        chat.id, {"parts": [{"kind": "tool_result", "call_id": "c1", "content": "error: segfault"}]}
    )
    writer.append(chat.id, "assistant", {"status": "error", "error": {"message": "marmalade timeout"}}, hidden=True)
    found = journal.search_sessions("segfault")
    assert [s.id for s, _ in found] == [chat.id]
    assert ("segfault", True) in found[0][1]
    assert journal.search_sessions("zucchini") == []  # reasoning is not the reply
    assert journal.search_sessions("quartzite") == []  # nor a call's arguments
    assert journal.search_sessions("marmalade") == []  # a hidden error row


def test_a_page_that_runs_out_of_time_says_so_and_the_next_goes_on(journal: Journal) -> None:
    with journal.write("chats") as conn:
        chats = [add_chat(conn, f"Chat {n}", ["basalt columns"] * 20, n * 100) for n in range(30)]
    with journal.read() as conn:
        page = search(conn, "basalt", deadline_s=0)  # stops after the first chat it looks at
        assert page.stopped_early
        assert page.after is not None
        assert [h.id for h in page.hits] == [chats[-1]]
        found, after = [h.id for h in page.hits], page.after
        while after is not None:
            more = search(conn, "basalt", after=after, deadline_s=0)
            found += [h.id for h in more.hits]
            after = more.after
    assert found == chats[::-1]


def test_deleted_chats_leave_the_index_and_it_stays_sound(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    keep, gone = journal.create_session("Keep"), journal.create_session("Gone")
    for session in (keep, gone):
        writer.append_user(session.id, {"parts": [{"kind": "text", "text": "obsidian shard"}]})
    journal.delete_session(gone.id)
    assert [s.id for s, _ in journal.search_sessions("obsidian")] == [keep.id]
    assert journal.purge_deleted() == 1
    again = journal.create_session("Again")  # may take the purged chat's number
    writer.append_user(again.id, {"parts": [{"kind": "text", "text": "another obsidian"}]})
    assert [s.id for s, _ in journal.search_sessions("obsidian")] == [again.id, keep.id]
    with journal.write("check") as conn:
        conn.execute("INSERT INTO message_index (message_index) VALUES ('integrity-check')")
        assert conn.execute("SELECT count(*) FROM message_index WHERE message_index MATCH 'obsidian'").fetchone() == (
            2,
        )


def old_journal(path: Path, chats: int, rows: int) -> dict[str, list[str]]:
    """A journal as a Cairn of schema 9 left it: ``chats`` chats of ``rows`` messages each,
    every message holding "lava" and its chat's own word."""
    with Journal.open(path, migrations=MIGRATIONS[:9]):
        pass
    made: dict[str, list[str]] = {}
    conn = sqlite3.connect(path)
    with conn:
        for n in range(chats):
            word = f"word{n}"
            made[word] = [add_chat(conn, f"Old {n}", [f"lava and {word} {k}" for k in range(rows)], n * 1000)]
    conn.close()
    return made


def test_an_older_journal_gets_its_index_in_the_background_and_search_answers_meanwhile(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    made = old_journal(path, chats=6, rows=BATCH_ROWS // 2)  # three batches' worth: not built at open
    with Journal.open(path) as journal:
        with journal.read() as conn:
            assert pending(conn) == 3 * BATCH_ROWS
        # The old index answers while the new one is built, and a new message is found by both.
        assert [s.title for s, _ in journal.search_sessions("word1")] == ["Old 1"]
        writer = TranscriptWriter(journal)
        new = journal.create_session("New")
        writer.append_user(new.id, {"parts": [{"kind": "text", "text": "fresh lava"}]})
        assert [s.title for s, _ in journal.search_sessions("fresh")] == ["New"]
        journal.delete_session(made["word2"][0])
        assert journal.purge_deleted() == 1  # a chat removed before its rows were indexed
        steps = 0
        while not journal.build_search_index():
            steps += 1
            assert [s.title for s, _ in journal.search_sessions("word4")] == ["Old 4"]
        assert steps >= 3
        with journal.read() as conn:
            assert pending(conn) is None
            assert conn.execute("SELECT name FROM sqlite_schema WHERE name LIKE 'transcript_search%'").fetchall() == []
            conn.execute("INSERT INTO message_index (message_index) VALUES ('integrity-check')")
            # Every message once: none missed, none indexed twice, the purged chat's gone.
            assert conn.execute("SELECT count(*) FROM message_index WHERE message_index MATCH 'lava'").fetchone() == (
                5 * BATCH_ROWS // 2 + 1,
            )
        titles = [s.title for page in every_page(journal, "lava") for s, _ in page.found]
        assert titles == ["New", "Old 5", "Old 4", "Old 3", "Old 1", "Old 0"]
        assert journal.search_sessions("word2") == []


def test_the_index_rows_are_numbered_by_chat(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    first, second = journal.create_session("One"), journal.create_session("Two")
    writer.append_user(second.id, {"parts": [{"kind": "text", "text": "pumice"}]})
    writer.append_user(first.id, {"parts": [{"kind": "text", "text": "pumice"}]})
    with journal.read() as conn:
        numbers = dict(conn.execute("SELECT session_id, number FROM search_chats").fetchall())
        rowids = [r[0] for r in conn.execute("SELECT rowid FROM message_index WHERE message_index MATCH 'pumice'")]
    assert rowids == sorted([numbers[first.id] << 32 | 1, numbers[second.id] << 32 | 1])
    assert json.dumps(sorted(numbers.values())) == json.dumps([1, 2])


def test_a_running_cairn_builds_the_index_in_the_background(cairn_paths: CairnPaths) -> None:
    old_journal(cairn_paths.journal, chats=4, rows=BATCH_ROWS)  # four batches: left to the build
    root = Root(cairn_paths, secrets=SecretStore(MemoryKeyring()))
    journal = root.open_journal()

    def left() -> int | None:
        with journal.read() as conn:
            return pending(conn)

    def old_index() -> bool:
        with journal.read() as conn:
            return conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'transcript_search'").fetchone() is not None

    def pieces() -> int:
        with journal.read() as conn:
            return segments(conn)

    writer = TranscriptWriter(journal)
    chat = journal.create_session("Many")
    for n in range(3000):  # a transaction each, a segment each, which FTS5 merges in fours
        writer.append_user(chat.id, {"parts": [{"kind": "text", "text": f"scoria {n}"}]})
        if pieces() > MOST_SEGMENTS:
            break

    async def run() -> None:
        assert left() == 4 * BATCH_ROWS
        assert pieces() > MOST_SEGMENTS
        async with root.running():
            for _ in range(6000):  # the build's batches, each a moment, on the core's loop
                if left() is None and not old_index() and pieces() <= MOST_SEGMENTS:
                    break
                await asyncio.sleep(0.01)
            assert left() is None
            assert not old_index()
            assert pieces() <= MOST_SEGMENTS
            assert [s.title for s, _ in journal.search_sessions("word3")] == ["Old 3"]

    try:
        asyncio.run(run())
    finally:
        root.close()


def test_the_index_is_merged_when_messages_have_left_it_in_many_segments(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    chat = journal.create_session("Many")
    for n in range(40):  # a transaction each, as a chat writes them: a segment each, merged in fours
        writer.append_user(chat.id, {"parts": [{"kind": "text", "text": f"gneiss layer {n}"}]})
    with journal.read() as conn:
        assert segments(conn) > 2
    assert journal.tidy_search_index(most=100)  # few enough: nothing to do
    steps = 0
    while not journal.tidy_search_index(most=1):
        steps += 1
    with journal.read() as conn:
        assert segments(conn) == 1
        conn.execute("INSERT INTO message_index (message_index) VALUES ('integrity-check')")
    assert [s.id for s, _ in journal.search_sessions("gneiss layer")] == [chat.id]
    assert journal.newest_match(chat.id, "gneiss") == writer.rows(chat.id)[-1].id
