"""Building the search index of a journal that was written before it (migration 10).

Migration 10 makes the new index empty and records the newest row it does not hold
(``SEARCH_PENDING``); rows written after that are indexed by the triggers as they come. The
rows before it are indexed here, newest first, a batch per short write transaction, so a
journal of a gigabyte never blocks start-up or the window: the core thread waits at most one
batch for the journal. Until the last batch, search answers from the old index
(``host.search_fallback``); the last batch drops the old index's triggers, and later batches
empty its tables before it is dropped.

A crash between batches loses nothing: each batch moves ``SEARCH_PENDING`` down in the same
transaction that indexed its rows, and the triggers index (and unindex) exactly the rows
above it, so no row is indexed twice or missed.
"""

from __future__ import annotations

import sqlite3

from host.schema import CHAT_SHIFT, MESSAGE_TEXT, SEARCH_PENDING

__all__ = ["BATCH_ROWS", "build_step", "merge_step", "pending", "segments"]

BATCH_ROWS = 1_000  # journal rows looked at per batch (a few tens of milliseconds)
MERGE_PAGES = 64  # index pages a merge step writes (a few tens of milliseconds)


def pending(conn: sqlite3.Connection) -> int | None:
    """The newest row the new index does not hold yet, ``None`` when it holds them all."""
    try:
        row = conn.execute("SELECT value FROM journal_meta WHERE key = ?", (SEARCH_PENDING,)).fetchone()
    except sqlite3.OperationalError:  # a journal older than schema 4 has no journal_meta
        return None
    return None if row is None else int(row[0])


def build_step(conn: sqlite3.Connection, rows: int = BATCH_ROWS) -> bool:
    """Index the next batch of older rows, in the caller's write transaction, or retire a
    batch of the old index once they are all in; ``True`` when nothing is left to do."""
    top = pending(conn)
    if top is None:
        return _retire_step(conn, rows) and merge_step(conn)
    low = max(0, top - rows)
    conn.execute(
        f"""
        INSERT INTO message_index (rowid, body)
        SELECT (c.number << {CHAT_SHIFT}) | r.seq, {MESSAGE_TEXT.format("r.content")}
        FROM transcript_rows AS r JOIN search_chats AS c ON c.session_id = r.session_id
        WHERE r.rowid > ? AND r.rowid <= ? AND r.hidden = 0 AND r.role IN ('user', 'assistant', 'tool')
        """,
        (low, top),
    )
    if low > 0:
        conn.execute("UPDATE journal_meta SET value = ? WHERE key = ?", (str(low), SEARCH_PENDING))
        return False
    # Every row is in: search turns to the new index now, and the old one is no longer kept.
    conn.execute("DELETE FROM journal_meta WHERE key = ?", (SEARCH_PENDING,))
    conn.execute("DROP TRIGGER IF EXISTS transcript_search_insert")
    conn.execute("DROP TRIGGER IF EXISTS transcript_search_delete")
    return False


def _retire_step(conn: sqlite3.Connection, rows: int) -> bool:
    """Empty the old index a batch at a time, then drop it: dropping a gigabyte's index at
    once would hold the journal for seconds."""
    shadows = [name for (name,) in conn.execute("SELECT name FROM sqlite_schema WHERE name IN (?, ?, ?)", _OLD_SHADOWS)]
    for name in shadows:
        # The postings only: FTS5's own records (rowid 10 and below) stay, so DROP can open it.
        gone = conn.execute(
            f"DELETE FROM {name} WHERE rowid IN (SELECT rowid FROM {name} WHERE rowid > 10 LIMIT ?)", (rows,)
        )
        if gone.rowcount:
            return False
    conn.execute("DROP TABLE IF EXISTS transcript_search")
    return True


def segments(conn: sqlite3.Connection) -> int:
    """How many segments the index is in (a search seeks in each)."""
    return int(conn.execute("SELECT count(DISTINCT segid) FROM message_index_idx").fetchone()[0])


def merge_step(conn: sqlite3.Connection, pages: int = MERGE_PAGES) -> bool:
    """Merge a few pages of the index's segments towards one, in the caller's write
    transaction; ``True`` when it is one segment. A search seeks in every segment, so a
    journal's many small ones (each transaction writes one) would make it several times
    slower; FTS5's own merging leaves a dozen or more at a million rows."""
    before = conn.total_changes
    conn.execute("INSERT INTO message_index (message_index, rank) VALUES ('merge', ?)", (-pages,))
    return conn.total_changes - before < 2  # FTS5's documented sign that there was nothing to merge


# The old index's big tables (FTS5's own): its copy of the text, its postings, its sizes.
_OLD_SHADOWS = ("transcript_search_content", "transcript_search_data", "transcript_search_docsize")
