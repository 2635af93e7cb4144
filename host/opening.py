"""Opening a journal safely: refusing what Cairn must not touch, configuring, migrating.

Nothing here writes to a file before it is known to be a Cairn journal that this Cairn may
change. The schema is read through a read-only connection. A journal of a schema newer than
this Cairn knows is opened read-write only when its recorded minimum reader version allows
it (and then never migrated); otherwise it is opened read-only, through a read-only
connection with ``query_only`` on, and the database file is not changed at all. A
migration is preceded by a dated backup of the whole database.

On a full disk the journal opens read-only too, when it needs no migration: a person can
still read every chat. SQLite cannot even read a WAL journal the usual way then (a reader
must grow the ``-shm`` index), so a journal with no log left to copy back, while nobody else
can write to it, is read as SQLite's ``immutable``, which needs no side file at all.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from host.errors import DiskFullError, JournalLockedError, JournalOpenError, NotAJournalError
from host.files import DISK_FULL, PRIVATE_FILE, private_dir, private_file
from host.lock import LockHeldError, ProcessLock
from host.read_only import ReadOnly, disk_full, held_elsewhere, is_disk_full, newer_cairn, wal_is_empty
from host.schema import APPLICATION_ID, META_MIN_READER, SEARCH_TERMS

__all__ = [
    "Opened",
    "SchemaState",
    "configure",
    "configure_read_only",
    "connect_read_only",
    "full_disk_error",
    "inspect_schema",
    "make_folder",
    "newer_schema_detail",
    "open_connection",
    "own_side_files",
    "read_schema",
    "refuse_foreign_file",
    "take_lock",
]


log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class SchemaState:
    """What a journal file says about its schema, read without writing anything."""

    version: int
    """``PRAGMA user_version``; 0 for a file that does not exist yet or is empty."""
    min_reader: int | None
    """The recorded minimum reader version; ``None`` when not recorded or unreadable."""


def newer_schema_detail(state: SchemaState, supported: int) -> str | None:
    """Why this Cairn (which knows schemas up to ``supported``) must not change the journal,
    as a phrase for the messages; ``None`` when it may read and write it."""
    if state.version <= supported:
        return None
    if state.min_reader is not None and state.min_reader <= supported:
        return None
    if state.min_reader is None:
        needs = "with no record of which older Cairns may change it"
    else:
        needs = f"which needs schema {state.min_reader} or newer to change it"
    return f"schema {state.version}, {needs}; this Cairn knows up to {supported}"


# -- looking before touching ---------------------------------------------------------


def refuse_foreign_file(path: Path) -> None:
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


def connect_read_only(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """A connection that cannot change the database file (SQLite's ``mode=ro``).

    A WAL journal's committed transactions are still seen, even those not yet copied back
    into the database file; SQLite may create its empty ``-wal`` and ``-shm`` side files.
    ``immutable``: nothing else changes the file, nor is a log left to copy back, so SQLite
    reads the file alone, creating and locking nothing.
    """
    uri = path.absolute().as_uri() + ("?mode=ro&immutable=1" if immutable else "?mode=ro")
    try:
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise JournalOpenError(
            f"Cairn cannot read its journal {path}: {exc}. Check free disk space and the "
            "permissions of the file and its folder, or set CAIRN_HOME to another folder.",
            path,
        ) from exc


def inspect_schema(path: Path) -> SchemaState:
    """Read the schema version and minimum reader version through a read-only connection;
    refuse a file that is not a Cairn journal. A file that does not exist is version 0."""
    if not path.exists():
        return SchemaState(version=0, min_reader=None)
    conn = connect_read_only(path)
    try:
        return read_schema(conn, path)
    finally:
        conn.close()


def read_schema(conn: sqlite3.Connection, path: Path) -> SchemaState:
    """``inspect_schema`` on a connection already open to the journal at ``path``."""
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = int(conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()[0])
    except sqlite3.OperationalError as exc:  # it could not be opened, not what it holds
        raise JournalOpenError(
            f"Cairn cannot read its journal {path}: {exc}. Check free disk space and the "
            "permissions of the file and its folder, or set CAIRN_HOME to another folder.",
            path,
        ) from exc
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
    return SchemaState(version=version, min_reader=_min_reader(conn))


def _min_reader(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute("SELECT value FROM journal_meta WHERE key = ?", (META_MIN_READER,)).fetchone()
    except sqlite3.DatabaseError:  # no journal_meta: a journal older than schema 4, or a damaged one
        return None
    value = None if row is None else row[0]
    if isinstance(value, str) and value.strip().isdecimal():
        value = int(value)
    return value if isinstance(value, int) and value > 0 else None


# -- connection settings -------------------------------------------------------------


def configure(conn: sqlite3.Connection, path: Path) -> None:
    try:
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute(SEARCH_TERMS)
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


def configure_read_only(conn: sqlite3.Connection, path: Path) -> None:
    """Settings for a read-only connection: the journal mode is left as the file has it,
    and ``query_only`` refuses every write even if the connection could make one."""
    try:
        conn.execute(SEARCH_TERMS)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    except sqlite3.Error as exc:
        raise JournalOpenError(
            f"Cairn cannot read its journal {path}: {exc}. Check free disk space and the "
            "permissions of the file and its folder, or set CAIRN_HOME to another folder.",
            path,
        ) from exc


def make_folder(path: Path) -> None:
    """The journal's folder, made owner-only if Cairn creates it."""
    try:
        private_dir(path.parent)
    except OSError as exc:
        raise JournalOpenError(
            f"Cairn cannot create the folder for its journal {path}: {exc.strerror}. "
            "Check the folder's permissions or set CAIRN_HOME to a writable folder.",
            path,
        ) from exc


def take_lock(path: Path) -> ProcessLock:
    """The lock that keeps a second running Cairn off the journal at ``path``, taken."""
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
        if exc.errno in DISK_FULL:
            raise full_disk_error(path) from exc
        raise JournalOpenError(
            f"Cairn cannot lock its journal {path}: {exc.strerror}. "
            "Check the folder's permissions or set CAIRN_HOME to a writable folder.",
            path,
        ) from exc
    return lock


def full_disk_error(path: Path) -> DiskFullError:
    return DiskFullError(
        f"Cairn cannot open its journal {path}: the disk is full. Free some space, "
        "or set CAIRN_HOME to a folder on another disk.",
        path,
    )


def own_side_files(path: Path) -> None:
    """Make the journal's -wal and -shm files owner-only and writable again. SQLite creates them
    with the journal's mode, so a journal that was read-only for a moment leaves side files
    nothing can write to until they are fixed; Cairn owns them and fixes them here."""
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        try:
            if side.exists() and (side.stat().st_mode & 0o777) != PRIVATE_FILE:
                side.chmod(PRIVATE_FILE)
        except OSError:
            log.warning("could not make %s owner-only", side)


# -- opening ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Opened:
    """A journal's connection as opening leaves it, short of migrating."""

    connection: sqlite3.Connection
    lock: ProcessLock | None  # None: read-only beside another Cairn, or the disk had no room for it
    read_only: ReadOnly | None
    version: int  # the schema version on disk, which migrating starts from


def open_connection(path: Path, latest: int, *, beside_holder: bool = False) -> Opened:
    """Open the journal at ``path`` (absolute) for this Cairn, which knows schemas up to
    ``latest``: read-write, or read-only when a newer Cairn wrote it or its disk is full.
    ``beside_holder``: read-only beside another running Cairn that holds it, instead of
    refusing (for a listing). Raises a ``JournalOpenError``, leaving nothing held."""
    make_folder(path)
    refuse_foreign_file(path)
    try:
        lock = take_lock(path)
    except JournalLockedError as exc:
        if not beside_holder:
            raise
        return _unwritable(path, None, held_elsewhere(path, exc.holder_pid), exc, latest, alone=False)
    except DiskFullError as exc:  # not even the lock file could be made, so no Cairn holds one
        return _unwritable(path, None, disk_full(path), exc, latest, alone=True)
    own_side_files(path)
    connection: sqlite3.Connection | None = None
    try:
        state = inspect_schema(path)
        newer = newer_schema_detail(state, latest)
        if newer is not None:
            connection = connect_read_only(path)
            configure_read_only(connection, path)
            log.warning("journal %s opened read-only: %s", path, newer)
            return Opened(connection, lock, newer_cairn(path, newer), state.version)
        # Owner-only before SQLite first writes it; its -wal and -shm files take its mode.
        private_file(path)
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        configure(connection, path)
        return Opened(connection, lock, None, state.version)
    except BaseException as exc:
        if connection is not None:
            connection.close()
        if isinstance(exc, Exception) and is_disk_full(exc):
            return _unwritable(path, lock, disk_full(path), full_disk_error(path), latest, alone=True)
        lock.release()
        raise


def _unwritable(
    path: Path, lock: ProcessLock | None, why: ReadOnly, refusal: JournalOpenError, latest: int, *, alone: bool
) -> Opened:
    """The journal opened read-only for ``why``, writing nothing; ``alone``: nobody else can
    write to it now. Raises ``refusal`` when it cannot be read so: it does not exist yet, or
    only a migration (which writes) would let this Cairn read it."""
    connection: sqlite3.Connection | None = None
    try:
        if not path.exists():
            raise refusal
        connection = connect_read_only(path, immutable=alone and wal_is_empty(path))
        configure_read_only(connection, path)
        state = read_schema(connection, path)
        if state.version < latest:
            raise refusal
    except BaseException as exc:
        if connection is not None:
            connection.close()
        if lock is not None:
            lock.release()
        if exc is refusal or isinstance(exc, NotAJournalError) or not isinstance(exc, JournalOpenError):
            raise
        raise refusal from exc
    newer = newer_schema_detail(state, latest)
    reason = why if newer is None else newer_cairn(path, newer)
    log.warning("journal %s opened read-only: %s", path, reason.reason)
    return Opened(connection, lock, reason, state.version)
