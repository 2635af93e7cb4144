"""Bringing a journal's schema up to date: the pending migrations, each in one transaction,
after a dated backup of the whole database in ``backups/`` beside it."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from host.files import private_dir, private_file
from host.schema import META_MIN_READER, Migration

__all__ = ["Migrating", "migrate"]

log = logging.getLogger(__name__)


class Migrating(Protocol):
    """The journal being migrated (``host.journal.Journal``), as migrating uses it."""

    path: Path

    def read(self) -> AbstractContextManager[sqlite3.Connection]: ...

    def write(self, what: str) -> AbstractContextManager[sqlite3.Connection]: ...


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
