"""Searching the journal's sessions, fast however long the history.

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

import re
import sqlite3
import unicodedata
from dataclasses import dataclass

__all__ = ["NO_SNIPPET", "ROW_CAP", "Hit", "Snippet", "fts_query", "needed_words", "newest_match", "search", "snippet"]

ROW_CAP = 20_000  # matching messages read at most, whatever the query
SNIPPET_WORDS = 12
_SESSION_COLUMNS = "id, title, created_at, updated_at"
_TOKEN = re.compile(r"[^\W_]+")  # a word as the index's tokenizer cuts it

Snippet = tuple[tuple[str, bool], ...]
"""Where a search matched: the text in pieces, each a word that matched (``True``) or not.
Pieces rather than marks in the text, so no message can forge a mark and the window marks
the words however it draws them."""
NO_SNIPPET: Snippet = ()


@dataclass(frozen=True)
class Hit:
    """A session that matches: its columns as ``sessions`` has them, and a snippet."""

    id: str
    title: str
    created_at: str
    updated_at: str
    snippet: Snippet


def fts_query(words: list[str]) -> str:
    """Each word quoted (so punctuation and operators are plain text) and made a prefix."""
    return " ".join('"' + word.replace('"', '""') + '"*' for word in words)


def _like(word: str) -> str:
    return "%" + word.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


def needed_words(query: str) -> list[str]:
    """The words of ``query`` a match must hold: a word that starts another one (or repeats
    it) is implied by that one, and would only make the full-text query slower."""
    words = list(dict.fromkeys(query.split()))
    return [w for w in words if not any(o != w and o.casefold().startswith(w.casefold()) for o in words)]


def search(conn: sqlite3.Connection, query: str, limit: int = 50, *, row_cap: int = ROW_CAP) -> list[Hit]:
    """The sessions matching every word of ``query``, the most recently active first; at most
    ``row_cap`` matching messages are read."""
    words = needed_words(query)
    if not words:
        return []
    title_test = " AND ".join("title LIKE ? ESCAPE '!'" for _ in words)
    titled = conn.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE deleted_at IS NULL AND ({title_test}) "
        "ORDER BY updated_at DESC, id DESC LIMIT ?",
        (*[_like(w) for w in words], limit),
    ).fetchall()
    deleted = {r[0] for r in conn.execute("SELECT id FROM sessions WHERE deleted_at IS NOT NULL")}
    newest: dict[str, int] = {}  # session id -> rowid of its newest matching message
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
    return [Hit(r[0], r[1], r[2], r[3], found_in.get(r[0], NO_SNIPPET)) for r in chosen]


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


def _fold(text: str) -> str:
    """Text as FTS5's default tokenizer compares it: case and diacritics folded away."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def snippet(text: str, words: list[str], size: int = SNIPPET_WORDS) -> Snippet:
    """About ``size`` words of ``text`` around the first word that starts with one of ``words``,
    each such word a marked piece, with "…" where text was left out (as FTS5's ``snippet``).
    Words split and fold as the index's tokenizer does: "don't" is "don" and "t", "cafe"
    finds "café"."""
    prefixes = tuple(_fold(part) for word in words for part in _TOKEN.findall(word))
    tokens = re.findall(r"[^\W_]+|[\W_]+", text)
    marked = {i for i, t in enumerate(tokens) if prefixes and _fold(t).startswith(prefixes)}
    spans = [i for i, t in enumerate(tokens) if _TOKEN.fullmatch(t)]
    first = next((n for n, i in enumerate(spans) if i in marked), 0)
    start = max(0, min(first - size // 4, len(spans) - size))
    shown = spans[start : start + size]
    if not shown:
        return NO_SNIPPET
    pieces: list[tuple[str, bool]] = [("…", False)] if start > 0 else []
    for i in range(shown[0], shown[-1] + 1):
        if pieces and not pieces[-1][1] and i not in marked:
            pieces[-1] = (pieces[-1][0] + tokens[i], False)  # plain text runs on in one piece
        else:
            pieces.append((tokens[i], i in marked))
    if start + size < len(spans):
        pieces.append(("…", False))
    return tuple(pieces)
