"""Why a journal is open read-only, in words, and knowing a full disk when it is met.

A journal is open read-only when a newer Cairn wrote it and this one must not change it
(``host.opening.newer_schema_detail``), when its disk is full, and, for a listing only, when
another running Cairn holds it. Each reason is one sentence for a banner or a command's note,
and one clause for the refusal of every write.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from host.files import DISK_FULL

__all__ = ["ReadOnly", "disk_full", "held_elsewhere", "is_disk_full", "newer_cairn", "wal_is_empty"]

# SQLite's result codes for a write the disk had no room for: a page (SQLITE_FULL), or the
# growth of a WAL journal's -shm index, which even a reader needs (SQLITE_IOERR_SHMSIZE).
_SQLITE_FULL = 13
_SQLITE_IOERR_SHMSIZE = 4874


@dataclass(frozen=True)
class ReadOnly:
    """Why a journal is open read-only."""

    reason: str
    """One sentence, for the window's banner and a command's note."""
    because: str
    """The cause and what to do, as a clause after "read-only because"."""

    def refusal(self, what: str, path: Path) -> str:
        """The message of a write refused: what could not be saved, where and why."""
        return f"Cairn cannot save {what}: the journal {path} is open read-only because {self.because}."


def newer_cairn(path: Path, detail: str) -> ReadOnly:
    return ReadOnly(
        f"The journal {path} was written by a newer Cairn ({detail}), so it is open read-only; "
        "update Cairn to keep chatting.",
        f"a newer Cairn wrote it ({detail}); update Cairn to keep chatting",
    )


def disk_full(path: Path) -> ReadOnly:
    return ReadOnly(
        f"The disk holding the journal {path} is full, so it was opened read-only; "
        "free some space and start Cairn again to keep chatting.",
        "its disk is full; free some space and start Cairn again",
    )


def held_elsewhere(path: Path, holder_pid: int | None) -> ReadOnly:
    who = f"process {holder_pid}" if holder_pid else "another process"
    return ReadOnly(
        f"Another running Cairn ({who}) holds the journal {path}, so it was opened read-only.",
        f"another running Cairn ({who}) holds it; close that Cairn first",
    )


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc``, or an error it was raised from, is a write refused for want of room."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in DISK_FULL:
            return True
        if isinstance(seen, sqlite3.Error) and seen.sqlite_errorcode in (_SQLITE_FULL, _SQLITE_IOERR_SHMSIZE):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def wal_is_empty(path: Path) -> bool:
    """Whether the journal at ``path`` has no write-ahead log to copy back (none, or empty):
    then all it holds is in the file itself (a journal closed cleanly)."""
    wal = path.with_name(path.name + "-wal")
    try:
        return wal.stat().st_size == 0
    except FileNotFoundError:
        return True
