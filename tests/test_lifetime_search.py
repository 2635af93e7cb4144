"""Search at a lifetime of history: the generator of the benchmark journal at a tiny size, and
the bounded search on it and on hand-written chats."""

from __future__ import annotations

import random
from pathlib import Path

from benchmarks.lifetime_journal import SEED, common_prefixes, generate, queries, vocabulary
from host.journal import Journal
from host.journal_search import Snippet, needed_words, search, snippet
from host.transcript import TranscriptWriter


def test_the_generator_writes_a_real_journal_that_search_and_the_transcript_read(journal: Journal) -> None:
    made = generate(journal, sessions=20, rows=400, long_chat=50)
    sessions = journal.sessions()
    assert len(sessions) == 20
    assert sessions[0].id == made.long_chat  # the long chat is the newest
    with journal.read() as conn:
        assert conn.execute("SELECT count(*) FROM transcript_rows").fetchone()[0] == 400
        first = '"' + made.words[0] + '"'
        holding = conn.execute(f"SELECT count(*) FROM message_index WHERE message_index MATCH '{first}'").fetchone()[0]
        assert 0 < holding <= 400
    rows = TranscriptWriter(journal).rows(made.long_chat)
    assert [r.seq for r in rows] == list(range(1, 51))
    assert [r.role for r in rows[:2]] == ["user", "assistant"]
    assert made.words == vocabulary(random.Random(SEED), len(made.words))

    common = made.words[0]
    found = journal.search_sessions(common)
    assert found, "the most common word is in some session"
    updated = [record.updated_at for record, _ in found]
    assert updated == sorted(updated, reverse=True)
    assert all(
        f"[{common}" in bracketed(pieces).casefold()
        for record, pieces in found
        if common not in record.title.casefold()
    )
    for query in queries(made.words, 10) + common_prefixes(made.words):
        for record, _ in journal.search_sessions(query, limit=5)[:5]:
            assert journal.session(record.id) is not None


def test_the_same_seed_makes_the_same_journal(journal: Journal, tmp_path: Path) -> None:
    made = generate(journal, sessions=5, rows=60, long_chat=20)
    with Journal.open(tmp_path / "again.sqlite3") as again:
        other = generate(again, sessions=5, rows=60, long_chat=20)
        assert [s.title for s in again.sessions()] == [s.title for s in journal.sessions()]
    assert other.long_chat == made.long_chat


def test_search_pages_stop_at_the_limit_and_go_on_after_it(journal: Journal) -> None:
    writer = TranscriptWriter(journal)
    old = journal.create_session("Old")
    writer.append_user(old.id, {"parts": [{"kind": "text", "text": "pebble in an old chat"}]})
    newer = []
    for n in range(6):
        session = journal.create_session(f"Chat {n}")
        writer.append_user(session.id, {"parts": [{"kind": "text", "text": f"pebble number {n}"}]})
        newer.append(session.id)
    with journal.read() as conn:
        first = search(conn, "pebble", limit=3)
        assert [h.id for h in first.hits] == newer[::-1][:3]
        assert first.after is not None
        second = search(conn, "pebble", limit=3, after=first.after)
        assert [h.id for h in second.hits] == newer[::-1][3:]
        last = search(conn, "pebble", limit=3, after=second.after)
        assert [h.id for h in last.hits] == [old.id]
        assert last.after is None
        assert len(search(conn, "pebble").hits) == 7
        assert [h.id for h in search(conn, "pebble old").hits] == [old.id]


def test_a_word_that_starts_another_adds_nothing_to_the_query(journal: Journal) -> None:
    assert needed_words("lent lentil Lentils lentil") == ["Lentils"]
    assert needed_words("cumin lentil") == ["cumin", "lentil"]
    writer = TranscriptWriter(journal)
    food = journal.create_session("Dinner")
    writer.append_user(food.id, {"parts": [{"kind": "text", "text": "How do I cook lentils with cumin?"}]})
    assert [s.id for s, _ in journal.search_sessions("lent lentils cu")] == [food.id]
    assert journal.search_sessions("lentils lentilz") == []


def bracketed(pieces: Snippet) -> str:
    """A snippet written out with its marked words in brackets, to read in an assertion."""
    return "".join(f"[{text}]" if marked else text for text, marked in pieces)


def test_a_snippet_marks_the_words_around_the_first_match() -> None:
    text = " ".join(f"w{n}" for n in range(40)) + " the lentils, and cumin seeds. " + "end " * 20
    made = bracketed(snippet(text, ["lentil", "CUM"]))
    assert "[lentils], and [cumin]" in made
    assert made.startswith("…")
    assert made.endswith("…")
    assert len(made.split()) <= 14
    assert snippet("Lentils only", ["lent"]) == (("Lentils", True), (" only", False))
    assert snippet("nothing here", ["zebra"]) == (("nothing here", False),)
    assert snippet("", ["zebra"]) == ()
    assert bracketed(snippet("Don't order a café crème", ["don't", "CAFE"])) == "[Don]'[t] order a [café] crème"


def test_brackets_in_a_message_are_its_text_never_a_mark() -> None:
    made = snippet("see [note] <b>lentils</b> here", ["lentil"])
    assert [text for text, marked in made if marked] == ["lentils"]
    assert "".join(text for text, _ in made) == "see [note] <b>lentils</b> here"


def test_search_results_carry_their_pin_and_archive(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "journal.sqlite3") as journal:
        writer = TranscriptWriter(journal)
        pinned, archived = journal.create_session("pinned walk"), journal.create_session("archived walk")
        for session in (pinned, archived):
            writer.append_user(session.id, {"parts": [{"kind": "text", "text": "a walk to the cairn"}]})
        journal.pin_session(pinned.id, True)
        journal.archive_session(archived.id, True)
        found = {record.title: record for record, _ in journal.search_sessions("cairn")}
        assert found["pinned walk"].pinned_at is not None
        assert found["archived walk"].archived_at is not None


def test_a_snippet_of_a_long_tool_result_is_cut_around_its_match_at_word_ends() -> None:
    text = "alpha beta " * 20_000 + "the célèbre granite quarry " + "gamma delta " * 20_000
    made = bracketed(snippet(text, ["granit"]))
    assert "[granite] quarry" in made
    assert made.startswith("…")
    assert made.endswith("…")
    assert all(word in {"alpha", "beta", "gamma", "delta", "the", "célèbre", "[granite]", "quarry", "…"}
               for word in made.replace("…", " … ").split())  # fmt: skip
    assert "[célèbre]" in bracketed(snippet(text, ["CELEB"]))  # folded as the index folds it, far in
    # A word too long to show whole is left out, never shown cut.
    assert bracketed(snippet("x" * 5000 + " granite " + "y" * 5000, ["granite"])) == "…[granite]…"
