"""Opening a journal safely: refusing what Cairn must not touch, configuring, migrating.

Nothing here writes to a file before it is known to be a Cairn journal that this Cairn may
change. The schema is read through a read-only connection. A journal of a schema newer than
this Cairn knows is opened read-write only when its recorded minimum reader version allows
it (and then never migrated); otherwise it is opened read-only, through a read-only
connection with ``query_only`` on, and the database file is not changed at all. A
migration is preceded by a dated backup of the whole database.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from host.errors import JournalLockedError, JournalOpenError, NotAJournalError
from host.files import PRIVATE_FILE, private_dir, private_file
from host.lock import LockHeldError, ProcessLock
from host.schema import APPLICATION_ID, META_MIN_READER, SEARCH_TERMS, Migration

__all__ = [
    "SchemaState",
    "configure",
    "configure_read_only",
    "connect_read_only",
    "inspect_schema",
    "make_folder",
    "migrate",
    "newer_schema_detail",
    "own_side_files",
    "refuse_foreign_file",
    "take_lock",
]


class Migrating(Protocol):
    """The journal being migrated (``host.journal.Journal``), as migrating uses it."""

    path: Path

    def read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def write(self, what: str) -> AbstractContextManager[sqlite3.Connection]: ...


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


# -- migrations ----------------------------------------------------------------------


def migrate(journal: Migrating, current: int, migrations: tuple[Migration, ...]) -> None:
    """Apply the pending migrations, each in one transaction, after a dated backup."""
    pending = [m for m in migrations if m.version > current]
    if not pending:
        return
    if current > 0:
        backup = _backup(journal, current)
        log.info("journal %s backed up to %s before migrating", journal.path, backup)
    for migration in pending:
        with journal.write(f"the schema migration to version {migration.version}") as conn:
            for statement in migration.statements:
                conn.execute(statement)
            if migration.min_reader is not None:
                conn.execute(
                    "INSERT INTO journal_meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (META_MIN_READER, str(migration.min_reader)),
                )
            conn.execute(f"PRAGMA user_version = {int(migration.version)}")
        log.info("journal %s migrated to version %d (%s)", journal.path, migration.version, migration.description)


def _backup(journal: Migrating, version: int) -> Path:
    folder = private_dir(journal.path.parent / "backups")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = folder / f"{journal.path.stem}-v{version}-{stamp}.sqlite3"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{journal.path.stem}-v{version}-{stamp}-{n}.sqlite3"
    partial = private_file(target.with_name(target.name + ".partial"))
    with journal.read() as conn:
        copy = sqlite3.connect(partial)
        try:
            conn.backup(copy)
        finally:
            copy.close()
    shutil.move(partial, target)
    return target


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


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change the database file (SQLite's ``mode=ro``).

    A WAL journal's committed transactions are still seen, even those not yet copied back
    into the database file; SQLite may create its empty ``-wal`` and ``-shm`` side files.
    """
    try:
        return sqlite3.connect(
            path.absolute().as_uri() + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
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
    finally:
        conn.close()


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
        raise JournalOpenError(
            f"Cairn cannot lock its journal {path}: {exc.strerror}. "
            "Check the folder's permissions or set CAIRN_HOME to a writable folder.",
            path,
        ) from exc
    return lock


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
