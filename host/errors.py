"""The journal's errors.

    JournalError
    ├── JournalOpenError        the journal cannot be opened; nothing was changed
    │   ├── NotAJournalError    the file is not a Cairn journal (or not SQLite at all)
    │   ├── JournalTooNewError  a newer Cairn wrote it; this one must not touch it
    │   └── JournalLockedError  another running Cairn holds it
    └── JournalWriteError       a row or session could not be committed

A ``JournalWriteError`` is the one error a writer raises. Callers treat it as a local
preparation failure: the request that needed the row is not sent, and a retry reuses the
row id. Every message names the file and says what to do.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "JournalError",
    "JournalLockedError",
    "JournalOpenError",
    "JournalTooNewError",
    "JournalWriteError",
    "NotAJournalError",
]


class JournalError(Exception):
    """Base of every journal error; ``path`` is the journal file concerned."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(message)
        self.path = path


class JournalOpenError(JournalError):
    """The journal could not be opened. The file on disk was left exactly as it was."""


class NotAJournalError(JournalOpenError):
    """The file exists but is not a Cairn journal."""


class JournalTooNewError(JournalOpenError):
    """The journal's schema is newer than this Cairn understands."""

    def __init__(self, message: str, path: Path, found: int, supported: int) -> None:
        super().__init__(message, path)
        self.found = found
        self.supported = supported


class JournalLockedError(JournalOpenError):
    """Another running Cairn has the journal open."""

    def __init__(self, message: str, path: Path, holder_pid: int | None) -> None:
        super().__init__(message, path)
        self.holder_pid = holder_pid


class JournalWriteError(JournalError):
    """A write failed or conflicted; nothing of it was committed."""
