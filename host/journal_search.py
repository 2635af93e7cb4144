"""Searching the journal's chats: every matching chat reachable, the work bounded per page.

A chat matches when its title holds every word of the query, or when one of its visible
messages (text or tool result) holds every word as a prefix. Results are chats, one row each,
the most recently active first (as the sidebar lists them), with a snippet of the newest
matching message; a page holds at most ``limit`` chats, and ``Page.after`` continues it.

The index (``message_index``, migration 10) numbers a message by its chat: its rowid is the
chat's number shifted left by ``CHAT_SHIFT``, or'ed with the message's seq, so one chat's
messages are one range of rowids and a search can leave a chat as soon as it has matched.
Two ways of finding a page take turns, a slice each, until one of them has it:

* **probe**: the chats in the sidebar's order, each asked whether it has a match (one seek
  in its range of rowids); the page is done at ``limit`` chats. Cheap when the words are
  common, since most chats have them.
* **walk**: the matching messages in rowid order, leaving each chat after ``PER_CHAT`` of
  its matches (a new statement from the next chat's first rowid). Every chat below its
  frontier is known, so probing skips them; once it reaches the end every matching chat is
  known, and only those (and titles that match) are looked at. Cheap when the words are in
  few chats, however many messages of one chat hold them.

Taking turns bounds a page at about twice the cheaper way. At the deadline the page stops
early and says so; ``Page.after`` goes on from the last chat looked at, so every match is
reached ("Search further").

A query word of one to four letters is a prefix the index keeps; a longer one is expanded to
the words of the index that start with it (FTS5's vocabulary), so no query makes FTS5 merge
every posting of a prefix again for each seek. While ``host.search_index`` builds the index
of an older journal, ``host.search_fallback`` answers instead.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field

from host.schema import CHAT_SHIFT
from host.search_text import NO_SNIPPET, Snippet, message_text, needed_words, snippet, tokens

__all__ = ["DEADLINE_S", "Hit", "Page", "match_expression", "newest_match", "search"]

# A page's time, then it stops early and says so: its own work (the thread's CPU time, so a
# busy machine does not cut pages short at random), or, waiting on a slow disk, five times
# that on the clock.
DEADLINE_S = 0.08
WAIT_FACTOR = 5
INDEXED_PREFIX = 4  # the longest prefix the index keeps (migration 10's ``prefix``)
MAX_EXPANSION = 64  # words a longer prefix may stand for; at that FTS5 merges them itself
SLICE = 40  # chats probed, then statements walked, in one turn of each
SLICE_ROWS = 400  # matching messages the walk reads in one turn
PER_CHAT = 8  # matches of one chat the walk reads before it jumps to the next chat
_LOW = (1 << CHAT_SHIFT) - 1
_SESSION_COLUMNS = "s.id, s.title, s.created_at, s.updated_at"


@dataclass(frozen=True)
class Hit:
    """A chat that matches: its columns as ``sessions`` has them, and a snippet."""

    id: str
    title: str
    created_at: str
    updated_at: str
    snippet: Snippet


@dataclass(frozen=True)
class Page:
    """One page of results. ``after`` is where the next page starts (the last chat looked
    at, as ``(updated_at, id)``), ``None`` when every match has been shown; ``stopped_early``
    says the page ran out of time before it had ``limit`` chats (there may be more)."""

    hits: list[Hit] = field(default_factory=list)
    after: tuple[str, str] | None = None
    stopped_early: bool = False


def match_expression(words: list[str], longer: Callable[[str], list[str]]) -> str | None:
    """The FTS5 query for ``words``: each of their tokens, as an indexed prefix or as itself
    or a ``longer`` word of the index that starts with it, all of them required; ``None``
    when the words hold no token at all."""
    needed: list[str] = []
    for token in dict.fromkeys(t for word in words for t in tokens(word)):
        if len(token) <= INDEXED_PREFIX:
            needed.append(_quoted(token) + "*")
            continue
        found = longer(token)
        if len(found) >= MAX_EXPANSION:
            needed.append(_quoted(token) + "*")
        else:
            needed.append("(" + " OR ".join(_quoted(t) for t in [token, *found]) + ")")
    return " AND ".join(needed) if needed else None


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _longer(conn: sqlite3.Connection) -> Callable[[str], list[str]]:
    """The words of the index that start with a token and are longer than it. The token
    itself is not asked for: FTS5's vocabulary counts a word's postings as it lists it, and
    the token typed out is often a common word (tens of milliseconds at a million rows),
    while the words it starts are longer and rarer."""

    def longer(token: str) -> list[str]:
        found = conn.execute(
            "SELECT term FROM temp.message_terms WHERE term > ? AND term < ? LIMIT ?",
            (token, token + "\U0010ffff", MAX_EXPANSION),
        )
        return [r[0] for r in found]

    return longer


def search(
    conn: sqlite3.Connection,
    query: str,
    limit: int = 50,
    *,
    after: tuple[str, str] | None = None,
    deadline_s: float = DEADLINE_S,
) -> Page:
    """The chats matching ``query`` after ``after`` in the sidebar's order, at most ``limit``."""
    words = needed_words(query)
    if not words:
        return Page()
    ends, waits = time.thread_time() + deadline_s, time.perf_counter() + WAIT_FACTOR * deadline_s
    expression = match_expression(words, _longer(conn))
    walker = _Walker(conn, expression)
    chosen: list[tuple[int, tuple[str, str, str, str]]] = []
    looked = after
    chats, narrowed = _chats(conn, words, after, None), False
    while True:
        if walker.done and not narrowed:  # only the chats it found, and titles, are left to look at
            chats.close()
            chats, narrowed = _chats(conn, words, looked, sorted(walker.chats)), True
        for _ in range(SLICE):
            following = next(chats, None)
            if following is None:
                return _page(conn, expression, words, chosen, after=None, stopped_early=False)
            number, columns, titled = following
            looked = (columns[3], columns[0])
            if titled or (expression and walker.matches(number)):
                chosen.append((number, columns))
                if len(chosen) >= limit:
                    chats.close()
                    return _page(conn, expression, words, chosen, after=looked, stopped_early=False)
            if time.thread_time() > ends or time.perf_counter() > waits:
                chats.close()
                return _page(conn, expression, words, chosen, after=looked, stopped_early=True)
        walker.walk(SLICE)


class _Walker:
    """The matching messages in rowid order, chat by chat, leaving a chat after ``PER_CHAT``
    of its matches; a slice at a time, so probing the chats in the sidebar's order can take
    turns with it. What it has read answers for the chats below its frontier."""

    def __init__(self, conn: sqlite3.Connection, expression: str | None) -> None:
        self._conn, self._expression = conn, expression
        self.chats: set[int] = set()
        self.frontier = 0  # every chat below it is known: in ``chats`` or without a match
        self.done = expression is None

    def walk(self, statements: int) -> None:
        rows = SLICE_ROWS
        for _ in range(statements):
            if self.done or rows <= 0:
                return
            rows -= self._statement(rows)

    def _statement(self, rows: int) -> int:
        """Read on from the frontier, at most ``rows`` matches; how many were read."""
        start = self.frontier << CHAT_SHIFT
        cursor = self._conn.execute(
            "SELECT rowid FROM message_index WHERE message_index MATCH ? AND rowid >= ?", (self._expression, start)
        )
        read = 0
        try:
            current, seen = -1, 0
            for (rowid,) in cursor:
                chat = rowid >> CHAT_SHIFT
                if chat != current:
                    self.chats.add(chat)
                    current, seen = chat, 0
                    self.frontier = chat + 1
                seen += 1
                read += 1
                if seen >= PER_CHAT or read >= rows:
                    return read  # on from the next chat (this one is known), in a new statement
            self.done = True
            return read
        finally:
            cursor.close()

    def matches(self, number: int) -> bool:
        if number in self.chats:
            return True
        if self.done or number < self.frontier:
            return False
        low = number << CHAT_SHIFT
        found = self._conn.execute(
            "SELECT 1 FROM message_index WHERE message_index MATCH ? AND rowid BETWEEN ? AND ? LIMIT 1",
            (self._expression, low, low | _LOW),
        ).fetchone()
        return found is not None


def _chats(
    conn: sqlite3.Connection, words: list[str], after: tuple[str, str] | None, only: list[int] | None
) -> Generator[tuple[int, tuple[str, str, str, str], bool], None, None]:
    """The chats in the sidebar's order (most recently active first) after ``after``, each
    with whether its title holds every word; only those in ``only`` or so titled, if given."""
    titled = " AND ".join("s.title LIKE ? ESCAPE '!'" for _ in words)
    likes = [_like(w) for w in words]
    where, arguments = "s.deleted_at IS NULL", list[object]()
    if after:
        where += " AND (s.updated_at < ? OR (s.updated_at = ? AND s.id < ?))"
        arguments += [after[0], after[0], after[1]]
    if only is not None:
        where += f" AND (c.number IN (SELECT value FROM json_each(?)) OR ({titled}))"
        arguments += [json.dumps(only), *likes]
    cursor = conn.execute(
        f"SELECT c.number, {_SESSION_COLUMNS}, {titled} FROM sessions AS s "
        f"JOIN search_chats AS c ON c.session_id = s.id WHERE {where} ORDER BY s.updated_at DESC, s.id DESC",
        [*likes, *arguments],
    )
    try:
        for row in cursor:
            yield row[0], (row[1], row[2], row[3], row[4]), bool(row[5])
    finally:
        cursor.close()


def _like(word: str) -> str:
    return "%" + word.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"


def _page(
    conn: sqlite3.Connection,
    expression: str | None,
    words: list[str],
    chosen: list[tuple[int, tuple[str, str, str, str]]],
    *,
    after: tuple[str, str] | None,
    stopped_early: bool,
) -> Page:
    hits = []
    for number, (id_, title, created, updated) in chosen:
        found = _newest_text(conn, expression, number, id_) if expression else None
        hits.append(Hit(id_, title, created, updated, snippet(found, words) if found else NO_SNIPPET))
    return Page(hits, after, stopped_early)


def _newest(conn: sqlite3.Connection, expression: str, number: int) -> int | None:
    """The seq of the chat's newest message that matches, if any."""
    low = number << CHAT_SHIFT
    found = conn.execute(
        "SELECT rowid FROM message_index WHERE message_index MATCH ? AND rowid BETWEEN ? AND ? "
        "ORDER BY rowid DESC LIMIT 1",
        (expression, low, low | _LOW),
    ).fetchone()
    return None if found is None else found[0] & _LOW


def _newest_text(conn: sqlite3.Connection, expression: str, number: int, session_id: str) -> str | None:
    seq = _newest(conn, expression, number)
    if seq is None:
        return None
    row = conn.execute(
        "SELECT content FROM transcript_rows WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).fetchone()
    return None if row is None else message_text(row[0])


def newest_match(conn: sqlite3.Connection, session_id: str, query: str) -> str | None:
    """The id of the chat's newest message holding every word of ``query`` (as ``search``
    matches them), where a chat opened from a search result is shown; ``None`` when none does."""
    words = needed_words(query)
    expression = match_expression(words, _longer(conn)) if words else None
    number = conn.execute("SELECT number FROM search_chats WHERE session_id = ?", (session_id,)).fetchone()
    if expression is None or number is None:
        return None
    seq = _newest(conn, expression, number[0])
    if seq is None:
        return None
    row = conn.execute("SELECT id FROM transcript_rows WHERE session_id = ? AND seq = ?", (session_id, seq)).fetchone()
    return None if row is None else str(row[0])
