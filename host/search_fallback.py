"""The search an older journal answers with while ``host.search_index`` builds its new index.

The journal's first index (``transcript_search``, one row per user or assistant message in
time order) is searched as it always was; the triggers keep it until the build is done.

A session matches when its title holds every word of the query, or when one visible message
holds every word as a prefix (FTS5, ``transcript_search``). The work is bounded whatever the
query, so a one-letter query in a journal of a million rows stays fast:

* messages are walked newest first (``ORDER BY rowid DESC``, which FTS5 reads lazily) and the
  walk stops once ``limit`` sessions are found or after ``ROW_CAP`` rows;
* titles are matched with one scan of the sessions table;
* a snippet is made only for the sessions returned, from the newest matching message's text,
  fetched by rowid (no second full-text query).

Results are the most recently active sessions first, as the sidebar lists them.
"""

from __future__ import annotations

import sqlite3

from host.journal_search import Hit, Page
from host.search_text import NO_SNIPPET, needed_words, snippet

__all__ = ["ROW_CAP", "newest_match", "search"]

ROW_CAP = 20_000  # matching messages read at most, whatever the query
_SESSION_COLUMNS = "id, title, created_at, updated_at"


def fts_query(words: list[str]) -> str:
    """Each word quoted (so punctuation and operators are plain text) and made a prefix."""
    return " ".join('"' + word.replace('"', '""') + '"*' for word in words)


def _like(word: str) -> str:
    return "%" + word.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


def search(conn: sqlite3.Connection, query: str, limit: int = 50, *, row_cap: int = ROW_CAP) -> Page:
    """The sessions matching every word of ``query``, the most recently active first; at most
    ``row_cap`` matching messages are read."""
    words = needed_words(query)
    if not words:
        return Page()
    title_test = " AND ".join("title LIKE ? ESCAPE '!'" for _ in words)
    titled = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE deleted_at IS NULL AND ({title_test}) "
        "ORDER BY updated_at DESC, id DESC LIMIT ?",
        (*[_like(w) for w in words], limit),
    ).fetchall()
    deleted = {r[0] for r in conn.execute("SELECT id FROM sessions WHERE deleted_at IS NOT NULL")}
    newest: dict[str, int] = {}  # session id -> rowid of its newest matching message
    stopped = False
    walked = conn.execute(
        "SELECT rowid, session_id FROM transcript_search WHERE transcript_search MATCH ? ORDER BY rowid DESC",
        (fts_query(words),),
    )
    try:
        for read, (rowid, session_id) in enumerate(walked, 1):
            if session_id not in newest and session_id not in deleted:
                newest[session_id] = rowid
                if len(newest) >= limit:
                    break
            if read >= row_cap:
                stopped = True
                break
    finally:
        walked.close()
    found = {r[0]: r for r in titled}
    missing = [s for s in newest if s not in found]
    if missing:
        marks = ", ".join("?" for _ in missing)
        for r in conn.execute(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id IN ({marks})", missing):
            found[r[0]] = r
    chosen = sorted(found.values(), key=lambda r: (r[3], r[0]), reverse=True)[:limit]
    bodies = _bodies(conn, [newest[r[0]] for r in chosen if r[0] in newest])
    found_in = {r[0]: snippet(bodies.get(newest[r[0]], ""), words) for r in chosen if r[0] in newest}
    hits = [Hit(r[0], r[1], r[2], r[3], found_in.get(r[0], NO_SNIPPET)) for r in chosen]
    return Page(hits, after=None, stopped_early=stopped)


def newest_match(conn: sqlite3.Connection, session_id: str, query: str, *, row_cap: int = ROW_CAP) -> str | None:
    """The id of the session's newest message holding every word of ``query`` (as ``search``
    matches them), where a chat opened from a search result is shown; ``None`` when none is
    among the newest ``row_cap`` matching messages of the whole journal."""
    words = needed_words(query)
    if not words:
        return None
    walked = conn.execute(
        "SELECT session_id, row_id FROM transcript_search WHERE transcript_search MATCH ? ORDER BY rowid DESC",
        (fts_query(words),),
    )
    try:
        for read, (session, row_id) in enumerate(walked, 1):
            if session == session_id:
                return str(row_id)
            if read >= row_cap:
                return None
    finally:
        walked.close()
    return None


def _bodies(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, str]:
    if not rowids:
        return {}
    marks = ", ".join("?" for _ in rowids)
    found = conn.execute(f"SELECT rowid, body FROM transcript_search WHERE rowid IN ({marks})", rowids)
    return {r[0]: r[1] for r in found}
