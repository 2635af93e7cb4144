"""Search as the journal offers it: the new index's pages once it is built, the old index's
answer while ``host.search_index`` builds it, each chat with its full record."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from host import journal_search, search_fallback
from host.search_index import pending
from host.search_text import Snippet
from host.session_record import SESSION_COLUMNS, SessionRecord, session_of

__all__ = ["SearchResults", "newest_match", "search_chats"]


@dataclass(frozen=True)
class SearchResults:
    """A page of chats that match, each with a snippet; ``after`` continues it ("Search
    further"), ``None`` when nothing is left; ``stopped_early``: the page ran out of time."""

    found: list[tuple[SessionRecord, Snippet]] = field(default_factory=list)
    after: tuple[str, str] | None = None
    stopped_early: bool = False


def search_chats(
    conn: sqlite3.Connection, query: str, limit: int = 50, after: tuple[str, str] | None = None
) -> SearchResults:
    if pending(conn) is not None:
        page = search_fallback.search(conn, query, limit) if after is None else journal_search.Page()
    else:
        page = journal_search.search(conn, query, limit, after=after)
    marks = ",".join("?" * len(page.hits))
    records = {  # with their pin and archive, so a result's menu offers the right actions
        r[0]: session_of(r)
        for r in conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id IN ({marks})", [h.id for h in page.hits]
        )
    }
    found = [
        (
            records.get(h.id)
            or SessionRecord(id=h.id, title=h.title, created_at=h.created_at, updated_at=h.updated_at),
            h.snippet,
        )
        for h in page.hits
    ]
    return SearchResults(found, page.after, page.stopped_early)


def _record(hit: journal_search.Hit) -> SessionRecord:
    return SessionRecord(id=hit.id, title=hit.title, created_at=hit.created_at, updated_at=hit.updated_at)


def newest_match(conn: sqlite3.Connection, session_id: str, query: str) -> str | None:
    if pending(conn) is not None:
        return search_fallback.newest_match(conn, session_id, query)
    return journal_search.newest_match(conn, session_id, query)
