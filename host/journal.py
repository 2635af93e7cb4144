"""The journal: one SQLite database holding every session Cairn keeps.

WAL mode with ``synchronous=FULL``: a commit that has returned survives a crash or power
loss. Foreign keys are on. One running Cairn owns the journal at a time (see ``lock``).
Opening never changes a file it cannot safely use: a foreign file, a newer schema or a
journal another Cairn holds is reported and left exactly as it was.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel, ConfigDict

from host.errors import (
    JournalLockedError,
    JournalOpenError,
    JournalTooNewError,
    JournalWriteError,
    NotAJournalError,
)
from host.ids import is_uuid7, new_id
from host.lock import LockHeldError, ProcessLock
from host.schema import APPLICATION_ID, MIGRATIONS, Migration, latest_version

__all__ = ["Journal", "SessionRecord", "utc_now"]

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"


def utc_now() -> str:
    """The current time as the journal stores it: ISO 8601, UTC, microseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SessionRecord(BaseModel):
    """A session as the journal lists it."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    created_at: str
    updated_at: str


class Journal:
    """An open journal. Use ``Journal.open``; close it (or use ``with``) when done.

    All access goes through one connection guarded by a lock, so the journal may be used
    from the core's worker thread while tests or tools use it from another.
    """

    def __init__(self, path: Path, connection: sqlite3.Connection, lock: ProcessLock) -> None:
        self.path = path
        self._conn = connection
        self._process_lock = lock
        self._guard = threading.RLock()
        self._closed = False

    # -- opening and closing -------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, migrations: tuple[Migration, ...] = MIGRATIONS) -> Journal:
        """Open (creating if needed) the journal at ``path`` and bring its schema up to date.

        Raises a ``JournalOpenError`` subclass, leaving the file untouched, when the file is
        not a Cairn journal, was written by a newer Cairn, or is held by another Cairn.
        """
        path = path.absolute()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalOpenError(
                f"Cairn cannot create the folder for its journal {path}: {exc.strerror}. "
                "Check the folder's permissions or set CAIRN_HOME to a writable folder.",
                path,
            ) from exc
        _refuse_foreign_file(path)

        lock = ProcessLock(path.with_name(path.name + ".lock"))
        try:
            lock.acquire()
        except LockHeldError as exc:
            who = f"process {exc.holder_pid}" if exc.holder_pid else "another process"
            raise JournalLockedError(
                f"The journal {path} is in use by another running Cairn ({who}). "
                "Close that Cairn first, or set CAIRN_HOME to use a separate journal.",
                path,
                exc.holder_pid,
            ) from None
        except OSError as exc:
            raise JournalOpenError(
                f"Cairn cannot lock its journal {path}: {exc.strerror}. "
                "Check the folder's permissions or set CAIRN_HOME to a writable folder.",
                path,
            ) from exc

        connection: sqlite3.Connection | None = None
        try:
            connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            version = _inspect(connection, path, migrations)
            _configure(connection, path)
            journal = cls(path, connection, lock)
            journal._migrate(version, migrations)
            return journal
        except BaseException:
            if connection is not None:
                connection.close()
            lock.release()
            raise

    def close(self) -> None:
        with self._guard:
            if self._closed:
                return
            self._closed = True
            self._conn.close()
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

    # -- transactions --------------------------------------------------------------------

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """The connection, held exclusively for a few queries."""
        with self._guard:
            self._check_open()
            yield self._conn

    @contextmanager
    def write(self, what: str) -> Iterator[sqlite3.Connection]:
        """One write transaction; it has committed when the ``with`` block returns.

        Any failure rolls back and surfaces as ``JournalWriteError``; ``what`` names the
        thing being saved, for the message.
        """
        with self._guard:
            self._check_open()
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        log.exception("rollback failed in %s", self.path)
                if isinstance(exc, sqlite3.Error):
                    raise JournalWriteError(
                        f"Cairn could not save {what} to its journal {self.path}: {exc}. "
                        "Nothing was sent; check free disk space and the file's permissions, "
                        "then retry.",
                        self.path,
                    ) from exc
                raise

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
        """Every session, the most recently active first."""
        with self.read() as conn:
            rows = conn.execute(
                "SELECT id, title, created_at, updated_at FROM sessions ORDER BY updated_at DESC, id DESC"
            ).fetchall()
        return [SessionRecord(id=r[0], title=r[1], created_at=r[2], updated_at=r[3]) for r in rows]

    def session(self, session_id: str) -> SessionRecord | None:
        with self.read() as conn:
            r = conn.execute(
                "SELECT id, title, created_at, updated_at FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        return None if r is None else SessionRecord(id=r[0], title=r[1], created_at=r[2], updated_at=r[3])

    # -- migrations ----------------------------------------------------------------------

    def _migrate(self, current: int, migrations: tuple[Migration, ...]) -> None:
        pending = [m for m in migrations if m.version > current]
        if not pending:
            return
        if current > 0:
            backup = self._backup(current)
            log.info("journal %s backed up to %s before migrating", self.path, backup)
        for migration in pending:
            with self.write(f"the schema migration to version {migration.version}") as conn:
                for statement in migration.statements:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {int(migration.version)}")
            log.info("journal %s migrated to version %d (%s)", self.path, migration.version, migration.description)

    def _backup(self, version: int) -> Path:
        folder = self.path.parent / "backups"
        folder.mkdir(exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = folder / f"{self.path.stem}-v{version}-{stamp}.sqlite3"
        n = 1
        while target.exists():
            n += 1
            target = folder / f"{self.path.stem}-v{version}-{stamp}-{n}.sqlite3"
        partial = target.with_name(target.name + ".partial")
        with self.read() as conn:
            copy = sqlite3.connect(partial)
            try:
                conn.backup(copy)
            finally:
                copy.close()
        shutil.move(partial, target)
        return target


def _refuse_foreign_file(path: Path) -> None:
    if not path.exists():
        return
    if not path.is_file():
        raise NotAJournalError(
            f"{path} is not a file, so Cairn cannot use it as its journal. "
            "Move it aside or set CAIRN_HOME to another folder.",
            path,
        )
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if header and header != SQLITE_HEADER:
        raise NotAJournalError(
            f"{path} is not a SQLite database, so Cairn will not open it as its journal. "
            "It was left untouched: move it aside (Cairn then starts a new journal) "
            "or set CAIRN_HOME to another folder.",
            path,
        )


def _inspect(conn: sqlite3.Connection, path: Path, migrations: tuple[Migration, ...]) -> int:
    """Read the schema version without writing anything; refuse what Cairn must not touch."""
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = int(conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise NotAJournalError(
            f"{path} cannot be read as a SQLite database ({exc}), so Cairn will not use it "
            "as its journal. It was left untouched: move it aside or set CAIRN_HOME to "
            "another folder.",
            path,
        ) from exc
    if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables > 0):
        raise NotAJournalError(
            f"{path} is a SQLite database but not a Cairn journal. It was left untouched: "
            "move it aside or set CAIRN_HOME to another folder.",
            path,
        )
    supported = latest_version(migrations)
    if version > supported:
        raise JournalTooNewError(
            f"The journal {path} was written by a newer Cairn (schema version {version}; "
            f"this Cairn knows up to {supported}). It was left untouched: update Cairn to "
            "open it.",
            path,
            version,
            supported,
        )
    return version


def _configure(conn: sqlite3.Connection, path: Path) -> None:
    try:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 5000")
    except sqlite3.Error as exc:
        raise JournalOpenError(
            f"Cairn cannot set up its journal {path}: {exc}. Check the file's permissions "
            "or set CAIRN_HOME to another folder.",
            path,
        ) from exc
    if str(mode).lower() != "wal":
        raise JournalOpenError(
            f"The journal {path} cannot use write-ahead logging (got {mode!r}); "
            "keep it on a local disk rather than a network share.",
            path,
        )
