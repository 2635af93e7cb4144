"""Opening a journal safely: refusing what Cairn must not touch, configuring, migrating.

Nothing here writes to a file before it is known to be a Cairn journal of a schema this
Cairn understands; a migration is preceded by a dated backup of the whole database.
"""

from __future__ import annotations

import logging
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from host.errors import JournalOpenError, JournalTooNewError, NotAJournalError
from host.schema import APPLICATION_ID, META_MIN_READER, Migration, latest_version

if TYPE_CHECKING:
    from host.journal import Journal

__all__ = ["configure", "inspect_schema", "migrate", "refuse_foreign_file"]

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"


# -- migrations ----------------------------------------------------------------------


def migrate(journal: Journal, current: int, migrations: tuple[Migration, ...]) -> None:
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


def _backup(journal: Journal, version: int) -> Path:
    folder = journal.path.parent / "backups"
    folder.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = folder / f"{journal.path.stem}-v{version}-{stamp}.sqlite3"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{journal.path.stem}-v{version}-{stamp}-{n}.sqlite3"
    partial = target.with_name(target.name + ".partial")
    with journal.read() as conn:
        copy = sqlite3.connect(partial)
        try:
            conn.backup(copy)
        finally:
            copy.close()
    shutil.move(partial, target)
    return target


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


def inspect_schema(conn: sqlite3.Connection, path: Path, migrations: tuple[Migration, ...]) -> int:
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


def configure(conn: sqlite3.Connection, path: Path) -> None:
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
