"""The journal: one SQLite database holding every session Cairn keeps.

WAL mode with ``synchronous=FULL``: a commit that has returned survives a crash or power
loss. Foreign keys are on. One running Cairn owns the journal at a time (see ``lock``).
Opening never changes a file it cannot safely use: a foreign file or a journal another
Cairn holds is reported and left exactly as it was, and a journal a newer Cairn wrote, which
this one must not change, is opened read-only, as is one on a full disk (see ``host.opening``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from host.chat_search import SearchResults, newest_match, search_chats
from host.errors import JournalReadOnlyError, JournalWriteError
from host.ids import is_uuid7, new_id
from host.lock import ProcessLock
from host.migrating import migrate
from host.opening import full_disk_error, open_connection
from host.read_only import ReadOnly, is_disk_full
from host.schema import MIGRATIONS, Migration, latest_version
from host.search_index import BATCH_ROWS, build_step, merge_step, pending, segments
from host.search_text import NO_SNIPPET, Snippet
from host.session_record import SESSION_COLUMNS as _SESSION_COLUMNS
from host.session_record import SessionRecord
from host.session_record import session_of as _session_of

__all__ = ["Journal", "SearchResults", "SessionRecord", "utc_now"]

log = logging.getLogger(__name__)


def utc_now() -> str:
    """The current time as the journal stores it: ISO 8601, UTC, microseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Journal:
    """An open journal. Use ``Journal.open``; close it (or use ``with``) when done.

    All access goes through one connection guarded by a lock, so the journal may be used
    from the core's worker thread while tests or tools use it from another.

    A journal that a newer Cairn wrote and this one must not change, or one on a full disk,
    is open read-only: ``read_only`` is true, ``read_only_reason`` says why in one sentence
    (for a banner), reads work and every write raises ``JournalReadOnlyError``.
    """

    def __init__(
        self,
        path: Path,
        connection: sqlite3.Connection,
        lock: ProcessLock | None,
        *,
        read_only: ReadOnly | None = None,
    ) -> None:
        self.path = path
        self._conn = connection
        self._process_lock = lock
        self._guard = threading.RLock()
        self._closed = False
        self._read_only = read_only
        self._depth = 0  # write transactions open on the connection, the outermost first

    # -- opening and closing -------------------------------------------------------------

    @classmethod
    def open(
        cls, path: Path, *, migrations: tuple[Migration, ...] = MIGRATIONS, beside_holder: bool = False
    ) -> Journal:
        """Open (creating if needed) the journal at ``path`` and bring its schema up to date.

        A journal of a newer schema is not migrated: it opens read-write when its minimum
        reader version is at most the latest of ``migrations``, and read-only otherwise. On a
        full disk it opens read-only. ``beside_holder``: when another running Cairn holds it,
        open it read-only instead of refusing (a listing). Raises a ``JournalOpenError``
        subclass, leaving the file untouched, when the file is not a Cairn journal, is held by
        another Cairn, or is on a full disk and does not exist yet or must be migrated.
        """
        path = path.absolute()
        opened = open_connection(path, latest_version(migrations), beside_holder=beside_holder)
        journal = cls(path, opened.connection, opened.lock, read_only=opened.read_only)
        if opened.read_only is None:
            try:
                migrate(journal, opened.version, migrations)
            except BaseException as exc:
                journal.close()
                if isinstance(exc, Exception) and is_disk_full(exc):
                    raise full_disk_error(path) from exc
                raise
            journal._index_if_small()
        return journal

    def close(self) -> None:
        with self._guard:
            if self._closed:
                return
            self._closed = True
            self._conn.close()
            if self._process_lock is not None:
                self._process_lock.release()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        with self.read() as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])

    @property
    def read_only(self) -> bool:
        return self._read_only is not None

    @property
    def read_only_reason(self) -> str | None:
        """Why the journal is open read-only and what to do, in one sentence; ``None`` when
        it is writable."""
        return None if self._read_only is None else self._read_only.reason

    # -- transactions --------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """The connection, held exclusively for a few queries."""
        with self._guard:
            self._check_open()
            yield self._conn

    @contextmanager
    def write(self, what: str) -> Iterator[sqlite3.Connection]:
        """One write transaction; it has committed when the outermost ``with`` block returns.

        A ``write`` inside another one (on the same thread) joins it: it runs as a savepoint,
        so its own failure undoes only its changes, and nothing of it is committed until the
        outer block commits; if the outer block fails, everything rolls back. That is how a
        reply and its usage are committed together.

        Any failure rolls back and surfaces as ``JournalWriteError``; ``what`` names the
        thing being saved, for the message. A read-only journal raises
        ``JournalReadOnlyError`` before anything is tried.
        """
        with self._guard:
            self._check_open()
            if self._read_only is not None:
                raise JournalReadOnlyError(self._read_only.refusal(what, self.path), self.path)
            conn = self._conn
            nested = self._depth > 0
            if nested and not conn.in_transaction:
                # SQLite rolled the outer transaction back on an earlier failure; a savepoint
                # now would commit on its own, outside the transaction the caller asked for.
                raise JournalWriteError(
                    f"Cairn could not save {what} to its journal {self.path}: an earlier failure already "
                    "rolled back the transaction it belongs to; retry the whole operation.",
                    self.path,
                )
            savepoint = f"cairn_write_{self._depth}"
            began = False
            try:
                conn.execute(f"SAVEPOINT {savepoint}" if nested else "BEGIN IMMEDIATE")
                began = True
                self._depth += 1
                try:
                    yield conn
                finally:
                    self._depth -= 1
                conn.execute(f"RELEASE {savepoint}" if nested else "COMMIT")
            except BaseException as exc:
                if began:
                    self._undo(savepoint if nested else None)
                if isinstance(exc, sqlite3.Error):
                    raise JournalWriteError(
                        f"Cairn could not save {what} to its journal {self.path}: {exc}. "
                        "Check free disk space and the file's permissions, then retry.",
                        self.path,
                    ) from exc
                raise

    def _undo(self, savepoint: str | None) -> None:
        """Roll back the outermost transaction, or only a nested write's savepoint."""
        conn = self._conn
        if not conn.in_transaction:  # SQLite already rolled everything back
            return
        try:
            if savepoint is None:
                conn.execute("ROLLBACK")
            else:
                conn.execute(f"ROLLBACK TO {savepoint}")
                conn.execute(f"RELEASE {savepoint}")
        except sqlite3.Error:
            log.exception("rollback failed in %s", self.path)

    def _check_open(self) -> None:
        if self._closed:
            raise JournalWriteError(f"The journal {self.path} is closed.", self.path)

    # -- sessions ------------------------------------------------------------------------

    def create_session(self, title: str = "", *, session_id: str | None = None) -> SessionRecord:
        """Create a session and return it once committed."""
        session_id = session_id or new_id()
        if not is_uuid7(session_id):
            raise JournalWriteError(f"Session id {session_id!r} is not a UUIDv7; let Cairn choose the id.", self.path)
        now = utc_now()
        with self.write("a new session") as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (session_id, title, now, now),
            )
        return SessionRecord(id=session_id, title=title, created_at=now, updated_at=now)

    def sessions(self) -> list[SessionRecord]:
        """Every session not deleted, archived ones too, the most recently active first."""
        with self.read() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE deleted_at IS NULL ORDER BY updated_at DESC, id DESC"
            ).fetchall()
        return [_session_of(r) for r in rows]

    def session(self, session_id: str) -> SessionRecord | None:
        with self.read() as conn:
            r = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ? AND deleted_at IS NULL", (session_id,)
            ).fetchone()
        return None if r is None else _session_of(r)

    def rename_session(self, session_id: str, title: str) -> None:
        with self.write("the session's new title") as conn:
            changed = conn.execute(
                "UPDATE sessions SET title = ? WHERE id = ? AND deleted_at IS NULL", (title.strip(), session_id)
            ).rowcount
        if not changed:
            raise JournalWriteError(f"Session {session_id} is not in the journal; it may have been deleted.", self.path)

    def replace_title(self, session_id: str, expected: str, title: str) -> bool:
        """Set the title only while it is still ``expected`` (one a person renamed is never
        overwritten); whether it was set."""
        with self.write("the session's new title") as conn:
            changed = conn.execute(
                "UPDATE sessions SET title = ? WHERE id = ? AND title = ? AND deleted_at IS NULL",
                (title.strip(), session_id, expected),
            ).rowcount
        return bool(changed)

    def pin_session(self, session_id: str, pinned: bool) -> None:
        """Pin the chat to the top of the list, or unpin it. Its activity time is unchanged."""
        self._update_session(session_id, "the chat's pin", "pinned_at = ?", utc_now() if pinned else None)

    def archive_session(self, session_id: str, archived: bool) -> None:
        """Move the chat out of the list into Archived (which unpins it), or bring it back."""
        if archived:
            self._update_session(session_id, "the chat's archiving", "archived_at = ?, pinned_at = NULL", utc_now())
        else:
            self._update_session(session_id, "the chat's return from the archive", "archived_at = ?", None)

    def _update_session(self, session_id: str, what: str, assignments: str, value: str | None) -> None:
        with self.write(what) as conn:
            sql = f"UPDATE sessions SET {assignments} WHERE id = ? AND deleted_at IS NULL"
            if not conn.execute(sql, (value, session_id)).rowcount:
                raise JournalWriteError(
                    f"Session {session_id} is not in the journal; it may have been deleted.", self.path
                )

    def delete_session(self, session_id: str) -> None:
        """Delete a session so that ``restore_session`` can still bring it back; ``purge_deleted``
        removes it for good."""
        with self.write("the session's deletion") as conn:
            conn.execute(
                "UPDATE sessions SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL", (utc_now(), session_id)
            )

    def restore_session(self, session_id: str) -> None:
        with self.write("the session's restoration") as conn:
            conn.execute("UPDATE sessions SET deleted_at = NULL WHERE id = ?", (session_id,))

    def purge_deleted(self) -> int:
        """Remove deleted sessions, with their rows and usage, for good; return how many."""
        with self.write("the removal of deleted sessions") as conn:
            doomed = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE deleted_at IS NOT NULL")]
            for session_id in doomed:
                conn.execute("DELETE FROM request_usage WHERE session_id = ?", (session_id,))
                # Anchored rows first: an anchor refers to a row of the same session.
                conn.execute("DELETE FROM transcript_rows WHERE session_id = ? AND anchor IS NOT NULL", (session_id,))
                conn.execute("DELETE FROM transcript_rows WHERE session_id = ?", (session_id,))
                conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        return len(doomed)

    def latest_meta(self, kind: str) -> str | None:
        """The newest hidden metadata of ``kind`` in any session not deleted, as stored JSON
        text; ``None`` when there is none."""
        with self.read() as conn:
            row = conn.execute(
                "SELECT r.model_system FROM transcript_rows AS r JOIN sessions AS s ON s.id = r.session_id "
                "WHERE s.deleted_at IS NULL AND r.role = 'system' AND r.model_system IS NOT NULL "
                "AND json_extract(r.model_system, '$.kind') = ? ORDER BY r.created_at DESC, r.id DESC LIMIT 1",
                (kind,),
            ).fetchone()
        return None if row is None else str(row[0])

    def newest_match(self, session_id: str, query: str) -> str | None:
        """The id of the session's newest message that ``query`` matches, if any."""
        with self.read() as conn:
            return newest_match(conn, session_id, query)

    def search_sessions(self, query: str, limit: int = 50) -> list[tuple[SessionRecord, Snippet]]:
        """The first page of ``search_page``; every session when the query is blank."""
        if not query.split():
            return [(s, NO_SNIPPET) for s in self.sessions()]
        return self.search_page(query, limit).found

    def search_page(self, query: str, limit: int = 50, after: tuple[str, str] | None = None) -> SearchResults:
        """Up to ``limit`` sessions whose title or a message holds every word of ``query`` (as a
        prefix), the most recently active first, after ``after``; each with a snippet of where
        the text matched (see ``host.journal_search``)."""
        with self.read() as conn:
            return search_chats(conn, query, limit, after)

    def _index_if_small(self) -> None:
        """A new journal's search index, or a small one's, is finished at once; a large one is
        left to the application's background build."""
        with self.read() as conn:
            left = pending(conn)
        if left is not None and left <= BATCH_ROWS:
            while not self.build_search_index():  # a few steps: its rows, then the old index's
                pass

    def tidy_search_index(self, most: int) -> bool:
        """Merge a step of the search index's segments when there are more than ``most``
        (each message written makes one, and a search seeks in each); ``True`` when done."""
        with self.write("tidying the search index") as conn:
            return segments(conn) <= most or merge_step(conn)

    def build_search_index(self) -> bool:
        """Index one more batch of the rows written before the search index existed; ``True``
        when it holds them all (see ``host.search_index``)."""
        with self.write("building the search index") as conn:
            return build_step(conn)
