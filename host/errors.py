"""The journal's errors.

    JournalError
    ├── JournalOpenError          the journal cannot be opened; nothing was changed
    │   ├── NotAJournalError      the file is not a Cairn journal (or not SQLite at all)
    │   └── JournalLockedError    another running Cairn holds it
    └── JournalWriteError         a row or session could not be committed
        └── JournalReadOnlyError  the journal is open read-only (a newer Cairn wrote it)

A ``JournalWriteError`` is the one error a writer raises. Its message says what could not
be saved, where and why; it does not say what that means for a request, because only the
caller knows whether one went out. A write before dispatch is a local preparation failure
(the request is not sent, and a retry reuses the row id); a write after a reply arrived
means the reply could not be saved. Every message names the file and says what to do.

A journal from a newer Cairn is not an open error: it opens read-write when its recorded
minimum reader version allows, and read-only otherwise (see ``host.opening``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "JournalError",
    "JournalLockedError",
    "JournalOpenError",
    "JournalReadOnlyError",
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


class JournalLockedError(JournalOpenError):
    """Another running Cairn has the journal open."""

    def __init__(self, message: str, path: Path, holder_pid: int | None) -> None:
        super().__init__(message, path)
        self.holder_pid = holder_pid


class JournalWriteError(JournalError):
    """A write failed or conflicted; nothing of it was committed."""


class JournalReadOnlyError(JournalWriteError):
    """The journal is open read-only, so nothing can be saved to it; nothing was changed."""
